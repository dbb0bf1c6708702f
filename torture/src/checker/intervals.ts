// The locked host-write intervals the workers' merge trace records (apps/worker merge-trace.ts),
// and the overlaps between them: observed from outside the product's bookkeeping. Pure.
import type { HistoryEvent } from "../history";
import { happened, type Operation } from "./operations";
import type { Violation, ViolationKind } from "./verdict";

export interface Interval {
  pid: number;
  target: string;
  runId: string | null;
  start: bigint;
  end: bigint | null;
}

/**
 * Locked host-write intervals from the workers' merge trace; a worker's death closes its open ones:
 * its observed exit, or before that a SIGKILL of it that took effect (`kills`: the ok completions
 * of kill_worker faults, faultsOf). A kill whose outcome is unknown (info) closes nothing: the
 * sections then end at the observed exit.
 */
export function mergeIntervals(history: readonly HistoryEvent[], kills: readonly Operation[]): Interval[] {
  const open = new Map<string, Interval[]>();
  const done: Interval[] = [];
  const close = (pid: unknown, at: bigint) => {
    for (const [key, list] of open) {
      if (!key.startsWith(`${pid}\0`)) continue;
      for (const interval of list) done.push({ ...interval, end: at });
      open.delete(key);
    }
  };
  // Each kill at its completion: the signal was sent by then.
  // (A kill_host names every worker it killed in `pids`.)
  const sent = kills.filter((k) => happened(k) && k.completedAt !== null).flatMap((k) => (Array.isArray(k.value.pids) ? (k.value.pids as unknown[]) : k.value.pid !== undefined ? [k.value.pid] : []).map((pid) => ({ at: k.completedAt!, pid })))
    .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  let next = 0;
  for (const e of history) {
    const t = BigInt(e.t);
    // A SIGKILLed worker's open sections end when the signal is sent: the kernel releases its
    // SQLite lock as it dies, moments after, while the harness may observe the exit much later
    // on a loaded machine (its event loop is busy). Closing at the observation would report a
    // writer that took the freed lock in between as concurrent.
    for (; next < sent.length && sent[next]!.at <= t; next++) close(sent[next]!.pid, sent[next]!.at);
    if (e.ev === "merge.enter") {
      const key = `${e.pid}\0${e.target}`;
      const list = open.get(key) ?? [];
      list.push({ pid: Number(e.pid), target: String(e.target), runId: (e.runId as string | null) ?? null, start: t, end: null });
      open.set(key, list);
    } else if (e.ev === "merge.exit") {
      const list = open.get(`${e.pid}\0${e.target}`);
      const interval = list?.shift();
      if (interval) done.push({ ...interval, end: t });
    } else if (e.ev === "worker.exit") close(e.pid, t);
  }
  for (; next < sent.length; next++) close(sent[next]!.pid, sent[next]!.at);
  for (const list of open.values()) done.push(...list);
  return done.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}

export function overlaps(intervals: Interval[], keyOf: (i: Interval) => string | null, kind: ViolationKind, out: Violation[]): void {
  const groups = new Map<string, Interval[]>();
  for (const interval of intervals) {
    const key = keyOf(interval);
    if (key === null) continue;
    const list = groups.get(key) ?? [];
    list.push(interval);
    groups.set(key, list);
  }
  for (const [key, list] of groups) {
    // Sorted by start: an interval overlaps an earlier one that has not ended when it starts.
    const active: Interval[] = [];
    for (const interval of list) {
      for (let i = active.length - 1; i >= 0; i--) {
        const other = active[i]!;
        if (other.end !== null && other.end <= interval.start) active.splice(i, 1);
      }
      for (const other of active) {
        out.push({
          kind,
          runId: interval.runId ?? undefined,
          detail: `${key}: pid ${other.pid} (run ${other.runId}) from t=${other.start} to ${other.end ?? "never"} and pid ${interval.pid} (run ${interval.runId}) from t=${interval.start}`,
        });
      }
      active.push(interval);
    }
  }
}
