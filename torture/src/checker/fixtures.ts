// The checker's test fixtures: a clean final state of two committed runs in one run directory,
// the host files a replay leaves, merge-trace intervals and history operations (history.ts's
// invoke/completion lines), and the set of violation kinds a state gives.
import type { Completion, HistoryEvent } from "../history";
import { check } from "./check";
import type { FinalState, HostEntry } from "./final-state";
import { applyLocalRun, type DirModel } from "./model";
import type { ViolationKind } from "./verdict";


export const WS = "/host/ws0";
export const DIR = "t/TORT-1";
export const R1 = "11111111-1111-4111-8111-111111111111";
export const R2 = "22222222-2222-4222-8222-222222222222";
export const R3 = "33333333-3333-4333-8333-333333333333";
export const ISSUE = "99999999-9999-4999-8999-999999999999";

let clock = 1_000n;

/** The host files the replay of `runs` (in order) leaves in DIR, plus the baseline. */
export function hostAfter(runs: string[]): Record<string, HostEntry> {
  const model: DirModel = new Map();
  for (const r of runs) applyLocalRun(model, DIR, r);
  const host: Record<string, HostEntry> = { "base/README.md": { kind: "file", sha256: "b1", token: null }, t: { kind: "directory" }, [DIR]: { kind: "directory" } };
  for (const [name, e] of model) host[`${DIR}/${name}`] = e.kind === "file" ? { kind: "file", sha256: e.sha256, token: e.token } : { kind: "symlink", target: e.target };
  return host;
}

export function cleanState(): FinalState {
  return {
    slots: [{ slot: "TORT-1", issueId: ISSUE, dir: DIR, workspace: WS, kind: "local" }],
    runs: [
      { id: R1, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" },
      { id: R2, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" },
    ],
    acceptedResults: [{ runId: R1 }, { runId: R2 }],
    coordinators: [
      { runId: R1, phase: "committed", committedAt: "2026-01-01T00:00:01.000Z", failureCode: null },
      { runId: R2, phase: "committed", committedAt: "2026-01-01T00:00:02.000Z", failureCode: null },
    ],
    finalizeOps: [
      { runId: R1, status: "succeeded", stage: "primary", omitted: false },
      { runId: R2, status: "succeeded", stage: "primary", omitted: false },
    ],
    actions: [],
    leases: [
      { id: "l1", runId: R1, status: "destroyed", provider: "local", providerLeaseId: "local-l1", sandboxExists: false },
      { id: "l2", runId: R2, status: "destroyed", provider: "local", providerLeaseId: "local-l2", sandboxExists: false },
    ],
    host: { [WS]: hostAfter([R1, R2]) },
    baseline: { [WS]: { "base/README.md": { kind: "file", sha256: "b1", token: null } } },
  };
}

export const merge = (pid: number, runId: string, from: number, to: number | null): HistoryEvent[] => [
  { t: String(from), ev: "merge.enter", pid, target: WS, runId },
  ...(to === null ? [] : [{ t: String(to), ev: "merge.exit", pid, target: WS, runId, ok: true }]),
];

export const kinds = (state: FinalState, history: HistoryEvent[] = []): ViolationKind[] => [...new Set(check(history, state).violations.map((v) => v.kind))].sort();

let opIds = 0;
/**
 * One operation's two lines as the harness writes them: its invoke (with `fields`), then its
 * completion `outcome` (with `answer`), at the given times or the next ticks of the clock.
 */
export function operation(f: string, fields: Record<string, unknown>, outcome: Completion = "ok", answer: Record<string, unknown> = {}, at?: { invoke: number; complete: number }): HistoryEvent[] {
  const id = ++opIds;
  const invokeT = at ? String(at.invoke) : String((clock += 10n));
  const completeT = at ? String(at.complete) : String((clock += 10n));
  return [
    { t: invokeT, ev: f, ...fields, type: "invoke", op: id },
    { t: completeT, ev: f, ...answer, type: outcome, op: id },
  ];
}
