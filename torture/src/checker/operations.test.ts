// The pairing reader of the history's operations: every invoke has exactly one completion, an
// info is neither counted as ok nor as fail, and the checker uses an info entry where the outcome
// matters (a kill that may not have been sent, a Discard that may have destroyed a sandbox).
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../history";
import { check } from "./check";
import { cleanState, kinds, merge, operation, R1, R2, R3, ISSUE } from "./fixtures";
import { completionsByFunction, faultsOf, happened, mayHaveHappened, readOperations } from "./operations";
import { FILE_RECOVERY } from "./verdict";

describe("readOperations", () => {
  it("pairs every invoke with its one completion by op id, the invoke's fields under the completion's", () => {
    const history: HistoryEvent[] = [
      { t: "100", ev: "client.wake", type: "invoke", op: 1, slot: "TORT-1" },
      { t: "110", ev: "fault", type: "invoke", op: 2, kind: "pg_restart" },
      { t: "120", ev: "merge.enter", pid: 10, target: "/host/a", runId: R1 },
      { t: "130", ev: "client.wake", type: "ok", op: 1, runId: R1, created: true },
      { t: "140", ev: "fault", type: "info", op: 2, code: "P1001", message: "Can't reach database server" },
    ];
    const { operations, unpaired } = readOperations(history);
    expect(unpaired).toEqual([]);
    expect(operations).toEqual([
      { id: 1, f: "client.wake", invokedAt: 100n, completedAt: 130n, outcome: "ok", value: { slot: "TORT-1", runId: R1, created: true } },
      { id: 2, f: "fault", invokedAt: 110n, completedAt: 140n, outcome: "info", value: { kind: "pg_restart", code: "P1001", message: "Can't reach database server" } },
    ]);
  });

  it("reports every break of the pairing; an invoke never completed reads as info", () => {
    const history: HistoryEvent[] = [
      { t: "100", ev: "attest", type: "invoke", op: 1, actionId: "a1" },
      { t: "110", ev: "attest", type: "invoke", op: 1, actionId: "a1" },
      { t: "120", ev: "client.stop", type: "ok", op: 2, outcome: "cancelled" },
      { t: "130", ev: "fault", type: "invoke", op: 3, kind: "kill_worker" },
      { t: "140", ev: "fault", type: "ok", op: 3 },
      { t: "150", ev: "fault", type: "fail", op: 3, code: "ESRCH" },
      { t: "160", ev: "client.wake", type: "invoke", op: 4 },
      { t: "170", ev: "client.stop", type: "ok", op: 4 },
    ];
    const { operations, unpaired } = readOperations(history);
    expect(unpaired).toHaveLength(5);
    expect(unpaired[0]).toContain("operation 1 (attest) invoked twice");
    expect(unpaired[1]).toContain("operation 2 (client.stop) completed ok without an invoke");
    expect(unpaired[2]).toContain("operation 3 (fault) completed again: fail after ok");
    expect(unpaired[3]).toContain("operation 4 invoked as client.wake completed as client.stop");
    expect(unpaired[4]).toContain("operation 1 (attest) invoked at t=100 never completed");
    // The first completion stands; the one never completed is indeterminate.
    expect(operations.map((op) => [op.id, op.outcome])).toEqual([
      [1, "info"],
      [3, "ok"],
      [4, "ok"],
    ]);
    expect(operations[0]!.completedAt).toBeNull();
  });

  it("an observation line (no type, or no op id) is no operation", () => {
    const history: HistoryEvent[] = [
      { t: "100", ev: "merge.exit", pid: 10, target: "/host/a", runId: R1, ok: true },
      { t: "110", ev: "worker.exit", pid: 10, type: "exit" },
      { t: "120", ev: "client.observed", runId: R1, status: "succeeded" },
    ];
    expect(readOperations(history)).toEqual({ operations: [], unpaired: [] });
  });

  it("an info is neither counted as ok nor as fail: it may or may not have happened", () => {
    const history = [
      ...operation("fault", { kind: "kill_worker", pid: 10 }),
      ...operation("fault", { kind: "kill_worker", pid: 11 }, "fail", { code: "ESRCH" }),
      ...operation("fault", { kind: "pg_restart" }, "info"),
      ...operation("fault", { kind: "terminate_pool_backend", backend: 7 }),
    ];
    const { operations } = readOperations(history);
    expect(operations.map(happened)).toEqual([true, false, false, true]);
    expect(operations.map(mayHaveHappened)).toEqual([true, false, true, true]);
    expect(completionsByFunction(operations)).toEqual({ fault: { ok: 2, fail: 1, info: 1 } });
    const faults = faultsOf(operations);
    expect(faults.byKind).toEqual({ kill_worker: 1, terminate_pool_backend: 1 });
    expect(faults.indeterminate).toBe(1);
    expect(faults.kills.map((k) => k.value.pid)).toEqual([10]);
  });
});

describe("the checker reads completions through the pairing reader", () => {
  it("counts: faults and attestations that took effect, Stops by answer, an info apart from both", () => {
    const history = [
      ...operation("fault", { kind: "kill_worker", pid: 10 }),
      ...operation("fault", { kind: "pg_restart" }, "info", { code: "P1001" }),
      ...operation("fault", { kind: "kill_agent", pid: 12 }, "fail", { code: "ESRCH" }),
      ...operation("attest", { actionId: "a1", runId: R1 }, "ok", { status: "attested" }),
      ...operation("attest", { actionId: "a2", runId: R2 }, "info", { code: "P1017" }),
      ...operation("attest", { actionId: "a3", runId: R2 }, "fail", { code: "owner_changed" }),
      ...operation("client.stop", { runId: R1 }, "ok", { outcome: "cancelled" }),
      ...operation("client.stop", { runId: R2 }, "fail", { code: "run_not_active" }),
      ...operation("client.stop", { runId: R3 }, "info", { code: null }),
    ];
    const { counts, violations } = check(history, cleanState());
    expect(violations).toEqual([]);
    expect(counts).toMatchObject({ faults: 1, faultsByKind: { kill_worker: 1 }, faultsIndeterminate: 1, attestations: 1 });
    expect(counts.stopsByOutcome).toEqual({ cancelled: 1, run_not_active: 1, info: 1 });
    expect(counts.operations).toEqual({ fault: { ok: 1, fail: 1, info: 1 }, attest: { ok: 1, fail: 1, info: 1 }, "client.stop": { ok: 1, fail: 1, info: 1 } });
  });

  it("a kill whose outcome is unknown (info) or refused (fail) does not end the worker's lock sections; the observed exit does", () => {
    const after = (outcome: "ok" | "fail" | "info") => [
      ...merge(10, R1, 100, null),
      ...operation("fault", { kind: "kill_worker", pid: 10 }, outcome, {}, { invoke: 145, complete: 150 }),
      ...merge(11, R2, 200, 300),
      { t: "400", ev: "worker.exit", pid: 10 },
    ];
    expect(kinds(cleanState(), after("ok"))).toEqual([]);
    expect(kinds(cleanState(), after("info"))).toEqual(["concurrent_writers"]);
    expect(kinds(cleanState(), after("fail"))).toEqual(["concurrent_writers"]);
  });

  it("a verified Discard excuses a destroyed held lease when it may have happened (ok, info), never when it was refused (fail)", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "process_lost", provider: "local" });
    s.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    s.leases.push({ id: "l3", runId: R3, status: "destroyed", provider: "local", providerLeaseId: "local-l3", sandboxExists: false, discardedByOperator: true });
    const discard = (outcome: "ok" | "fail" | "info", verified = true) => operation("operator.discard", { leaseId: "l3", runId: R3, verified }, outcome);
    expect(kinds(s, discard("ok"))).toEqual([]);
    expect(check(discard("ok"), s).counts.operatorDiscards).toBe(1);
    expect(kinds(s, discard("info"))).toEqual([]);
    expect(check(discard("info"), s).counts.operatorDiscards).toBe(0);
    expect(kinds(s, discard("fail"))).toEqual(["died_before_result_unrecovered", "held_sandbox_destroyed"]);
    // The harness declines an unverified Discard (fail): it excuses nothing either.
    expect(kinds(s, discard("fail", false))).toEqual(["died_before_result_unrecovered", "held_sandbox_destroyed"]);
    // A refused repeat does not undo an earlier Discard that may have happened.
    expect(kinds(s, [...discard("info"), ...discard("fail")])).toEqual([]);
  });
});
