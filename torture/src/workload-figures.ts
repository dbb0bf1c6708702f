// The workload's own figures (its aim: most runs reach an accepted result, at least a third commit,
// the fault rate unchanged, and the worker kills still landing on copybacks): printed under the
// checker's counts table and written into the report, from the history and the checker's counts.
// The faults are those that took effect (ok completions, through checker/operations.ts). Pure: the
// caller reads the history and prints.
import { faultsOf, readOperations } from "./checker/operations";
import type { HistoryEvent } from "./history";

export interface WorkloadFigures {
  acceptedRatio: number;
  commitRatio: number;
  faultsPerMinute: number;
  faultsPerMinuteByKind: Record<string, number>;
  /** Worker kills by what the killed worker was doing (worker-activity.ts hitOf); `unknown`: not read in time. */
  killsByHit: Record<string, number>;
  /** The share of worker kills whose worker was copying or finalizing a run (unknown ones left out). */
  killsOnFinalizationRatio: number;
  /** Medians over the runs the clients observed ending, in seconds: queued, turn (start to accepted result), finalization (accepted to committed). */
  medianSeconds: { queued: number | null; turn: number | null; finalization: number | null };
}

const ms = (iso: unknown): number | null => (typeof iso === "string" ? Date.parse(iso) : null);

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! / 100) / 10;
}

export function workloadFigures(events: readonly HistoryEvent[], counts: { runs: number; acceptedResults: number; commits: number }, chaosMinutes: number): WorkloadFigures {
  const { byKind, kills } = faultsOf(readOperations(events).operations);
  const faults = Object.values(byKind).reduce((a, b) => a + b, 0);
  const killsByHit: Record<string, number> = {};
  for (const kill of kills) killsByHit[String(kill.value.hit ?? "unknown")] = (killsByHit[String(kill.value.hit ?? "unknown")] ?? 0) + 1;
  const queued: number[] = [];
  const turn: number[] = [];
  const finalization: number[] = [];
  for (const e of events) {
    if (e.ev === "client.observed") {
      const [created, started, accepted, committed] = [ms(e.createdAt), ms(e.startedAt), ms(e.acceptedAt), ms(e.committedAt)];
      if (created !== null && started !== null) queued.push(started - created);
      if (started !== null && accepted !== null) turn.push(accepted - started);
      if (accepted !== null && committed !== null) finalization.push(committed - accepted);
    }
  }
  const perMinute = (n: number) => Math.round((n / chaosMinutes) * 10) / 10;
  const known = Object.entries(killsByHit).filter(([k]) => k !== "unknown").reduce((a, [, n]) => a + n, 0);
  const onFinalization = (killsByHit.copy ?? 0) + (killsByHit.finalization ?? 0);
  const ratio = (n: number, of: number) => (of === 0 ? 0 : Math.round((n / of) * 1000) / 10);
  return {
    acceptedRatio: ratio(counts.acceptedResults, counts.runs),
    commitRatio: ratio(counts.commits, counts.runs),
    faultsPerMinute: perMinute(faults),
    faultsPerMinuteByKind: Object.fromEntries(Object.entries(byKind).sort().map(([k, n]) => [k, perMinute(n)])),
    killsByHit,
    killsOnFinalizationRatio: ratio(onFinalization, known),
    medianSeconds: { queued: median(queued), turn: median(turn), finalization: median(finalization) },
  };
}

/** The figures as rows under the counts table. */
export function formatFigures(f: WorkloadFigures): string {
  const rows: [string, string][] = [
    ["accepted results / runs", `${f.acceptedRatio} %`],
    ["commits / runs", `${f.commitRatio} %`],
    ["faults per minute of chaos", String(f.faultsPerMinute)],
    ...Object.entries(f.faultsPerMinuteByKind).map(([k, n]): [string, string] => [`  ${k}`, String(n)]),
    ["worker kills by what they hit", Object.keys(f.killsByHit).length ? "" : "0"],
    ...Object.entries(f.killsByHit).sort().map(([k, n]): [string, string] => [`  ${k}`, String(n)]),
    ["  of them on a copy or finalization", `${f.killsOnFinalizationRatio} %`],
    ["median seconds queued / turn / finalization", [f.medianSeconds.queued, f.medianSeconds.turn, f.medianSeconds.finalization].map((v) => (v === null ? "-" : String(v))).join(" / ")],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join("\n");
}
