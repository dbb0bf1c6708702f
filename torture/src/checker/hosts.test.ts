// The two-host rules (hosts.ts) against hand-made histories: a clean two-host history passes, and
// each rule is reported by a history or state that breaks exactly it.
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../history";
import { cleanState, kinds, operation, R1, R2, WS } from "./fixtures";
import type { FinalState } from "./final-state";
import { check } from "./check";

const WS_B = "/host-b/ws1";
const L1 = "l1";

/** The clean fixture (R1, R2 committed in WS) as host a's, beside an empty workspace of host b. */
function twoHostState(): FinalState {
  const state = cleanState();
  state.host[WS_B] = {};
  state.baseline[WS_B] = {};
  state.hosts = {
    hosts: [
      { id: "a", home: "/host-a", workspaces: [WS] },
      { id: "b", home: "/host-b", workspaces: [WS_B] },
    ],
    runHost: { [R1]: "a", [R2]: "a" },
    claims: [
      { runId: R1, hostId: "a" },
      { runId: R2, hostId: "a" },
    ],
    leases: [{ leaseId: L1, hostId: "a", sandboxOn: [] }],
  };
  return state;
}

const start = (t: number, pid: number, hostId: string): HistoryEvent => ({ t: String(t), ev: "worker.start", pid, hostId });
const claim = (t: number, pid: number, runId: string): HistoryEvent => ({ t: String(t), ev: "worker.claim", pid, runId });
const sweep = (t: number, pid: number, name: string, unit: Record<string, string>): HistoryEvent => ({ t: String(t), ev: "sweep.handle", pid, sweep: name, ...unit });
const enter = (t: number, pid: number, target: string, runId: string): HistoryEvent[] => [
  { t: String(t), ev: "merge.enter", pid, target, runId, via: "dispatch" },
  { t: String(t + 5), ev: "merge.exit", pid, target, runId, ok: true },
];
/** Workers 10 (host a) and 20 (host b), then R1 and R2 claimed and copied by host a. */
const base = (): HistoryEvent[] => [start(1, 10, "a"), start(2, 20, "b"), claim(100, 10, R1), ...enter(110, 10, WS, R1), claim(200, 10, R2), ...enter(210, 10, WS, R2)];

describe("the two-host rules", () => {
  it("pass a clean two-host history (and count what they saw)", () => {
    const history = [...base(), sweep(300, 10, "orphans", { runId: R1 }), sweep(310, 20, "lease_cleanup", { leaseId: "remote-lease" })];
    const verdict = check(history, twoHostState());
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts.hosts).toMatchObject({ claimsTraced: 2, sweepUnitsTraced: 2 });
  });

  it("cross_host_write: a process of host b inside the lock of host a's workspace", () => {
    expect(kinds(twoHostState(), [...base(), ...enter(400, 20, `${WS}/t/TORT-1`, R1)])).toContain("cross_host_write");
  });

  it("cross_host_write: a file of a run of host a's task in host b's workspace, and a sandbox under the other root", () => {
    const file = twoHostState();
    file.host[WS_B] = { "t/x.txt": { kind: "file", sha256: "s", token: R1 } };
    expect(kinds(file, base())).toContain("cross_host_write");
    const sandbox = twoHostState();
    sandbox.hosts!.leases[0]!.sandboxOn = ["b"];
    expect(kinds(sandbox, base())).toEqual(["cross_host_write"]);
  });

  it("wrong_host_claim: host a's run claimed by host b (traced, and as the database recorded it)", () => {
    // (R1's files in host a's workspace are then a run claimed by host b: cross_host_write too.)
    expect(kinds(twoHostState(), [...base(), claim(400, 20, R1)])).toEqual(["cross_host_write", "wrong_host_claim"]);
    const recorded = twoHostState();
    recorded.hosts!.claims.push({ runId: R2, hostId: "b" });
    expect(kinds(recorded, base())).toEqual(["wrong_host_claim"]);
  });

  it("wrong_host_claim: an unbound workspace under host a's root, claimed (and so bound) by host b, is a wrong-host claim; claimed by host a it is not", () => {
    // The demo seed's defect: R1's workspace lies under host a's root, unbound; host b's claim bound it to b.
    const misbound = twoHostState();
    misbound.hosts!.runWorkspace = { [R1]: WS, [R2]: WS };
    misbound.hosts!.runHost = { [R1]: "b", [R2]: "a" };
    misbound.hosts!.claims[0] = { runId: R1, hostId: "b" };
    const history = [start(1, 10, "a"), start(2, 20, "b"), claim(100, 20, R1), claim(200, 10, R2), ...enter(210, 10, WS, R2)];
    // (The fixture's R1 files in host a's workspace are then a write of a run bound to b: cross_host_write too.)
    const claims = check(history, misbound).violations.filter((v) => v.kind === "wrong_host_claim");
    expect(claims.map((v) => v.runId)).toEqual([R1, R1]);
    expect(claims[0]!.detail).toContain("lies under host a's root");
    // Host a claimed it and bound it: nothing to report.
    const placed = twoHostState();
    placed.hosts!.runWorkspace = { [R1]: WS, [R2]: WS };
    expect(check(base(), placed).violations).toEqual([]);
  });

  it("a PID reused by a worker of the other host is judged by the worker that had it then", () => {
    // Worker 10 of host a dies; the OS gives PID 10 to a worker of host b, which claims nothing of a's.
    const history = [...base(), { t: "500", ev: "worker.exit", pid: 10 }, start(600, 10, "b"), claim(700, 10, R1)];
    expect(kinds(twoHostState(), history)).toEqual(["cross_host_write", "wrong_host_claim"]);
    expect(kinds(twoHostState(), [...base(), { t: "500", ev: "worker.exit", pid: 10 }, start(600, 10, "b")])).toEqual([]);
  });

  it("wrong_host_finalize, wrong_host_sweep, wrong_host_cleanup: another host's sweep handles a run or lease of host a", () => {
    expect(kinds(twoHostState(), [...base(), sweep(400, 20, "finalization", { runId: R1 })])).toEqual(["wrong_host_finalize"]);
    expect(kinds(twoHostState(), [...base(), sweep(400, 20, "orphans", { runId: R1 })])).toEqual(["wrong_host_sweep"]);
    expect(kinds(twoHostState(), [...base(), sweep(400, 20, "lease_cleanup", { leaseId: L1 })])).toEqual(["wrong_host_cleanup"]);
    expect(kinds(twoHostState(), [...base(), sweep(400, 20, "settled_run_leases", { leaseId: L1 })])).toEqual(["wrong_host_cleanup"]);
  });

  it("dead_host_run_lost: a dead host's run claimed while it is down, or left queued after it returned", () => {
    const S = 1_000_000_000; // ns
    const kill = operation("fault", { kind: "kill_host", host: "a", pids: [10] }, "ok", {}, { invoke: 150, complete: 160 });
    const back = operation("host.return", { host: "a" }, "ok", {}, { invoke: 10 * S, complete: 10 * S + 1 });
    // R2 woken at 2 s while host a is down, claimed by host a at 11 s after its return: it waited.
    const wake = operation("client.wake", { slot: "TORT-1" }, "ok", { runId: R2 }, { invoke: 2 * S, complete: 2 * S + 5 });
    const withoutR2Claim = base().filter((e) => !(e.ev === "worker.claim" && e.runId === R2));
    const clean = [...withoutR2Claim, ...kill, ...wake, ...back, claim(11 * S, 10, R2)];
    const verdict = check(clean, twoHostState());
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts.hosts).toMatchObject({ hostKills: 1, hostReturns: 1, waitedForDeadHost: 1 });
    // The same claim at 5 s, before the return: someone claimed the dead host's run.
    expect(kinds(twoHostState(), [...withoutR2Claim, ...kill, ...wake, ...back, claim(5 * S, 10, R2)])).toContain("dead_host_run_lost");
    // A line the killed process wrote as the SIGKILL landed (within 100 ms of the kill's completion) is not.
    expect(kinds(twoHostState(), [...withoutR2Claim, ...kill, claim(160 + 50_000_000, 10, R2), ...wake, ...back])).toEqual([]);
    const left = twoHostState();
    left.runs[1]!.status = "queued";
    expect(kinds(left, clean)).toContain("dead_host_run_lost");
    // Held by an open recovery action (or its fake sandbox lost with its worker): waiting rightly, not lost.
    const heldRun = twoHostState();
    heldRun.runs[1]!.status = "running";
    heldRun.actions.push({ id: "act-1", runId: heldRun.runs[1]!.id, cause: "native_workspace_finalization_owner_unverified", status: "active" });
    expect(kinds(heldRun, clean)).not.toContain("dead_host_run_lost");
    const lostSandbox = twoHostState();
    lostSandbox.runs[1]!.status = "running";
    lostSandbox.coordinators = lostSandbox.coordinators.filter((c) => c.runId !== lostSandbox.runs[1]!.id);
    lostSandbox.coordinators.push({ runId: lostSandbox.runs[1]!.id, phase: "retryable_failure", committedAt: null, failureCode: "provider_sandbox_missing" });
    expect(kinds(lostSandbox, clean)).not.toContain("dead_host_run_lost");
  });

  it("a kill_host ends the open lock sections of every worker it killed, when it is sent", () => {
    const kill = operation("fault", { kind: "kill_host", host: "a", pids: [10, 11] }, "ok", {}, { invoke: 145, complete: 150 });
    const open = (pid: number, runId: string): HistoryEvent => ({ t: "120", ev: "merge.enter", pid, target: WS, runId, via: "reconcile" });
    const history = [start(1, 10, "a"), start(3, 11, "a"), start(2, 20, "b"), open(11, R1), ...kill, ...enter(200, 10, WS, R2)];
    expect(kinds(twoHostState(), history)).not.toContain("concurrent_writers");
    const notKilled = operation("fault", { kind: "kill_host", host: "a", pids: [10] }, "ok", {}, { invoke: 145, complete: 150 });
    expect(kinds(twoHostState(), [start(1, 10, "a"), start(3, 11, "a"), open(11, R1), ...notKilled, ...enter(200, 10, WS, R2)])).toContain("concurrent_writers");
  });
});
