// The checker against hand-made histories and final states: a clean one passes, and each
// violation kind is reported by a state that contains exactly that violation (the files' kinds in
// files.test.ts).
import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../history";
import { check } from "./check";
import { formatCounts } from "./counts";
import { cleanState, hostAfter, ISSUE, kinds, merge, operation, R1, R2, R3, WS } from "./fixtures";
import { FILE_RECOVERY, OWNER_UNVERIFIED, VIOLATION_KINDS } from "./verdict";

describe("the torture checker", () => {
  it("passes a clean history and final state, and prints the counts table", () => {
    const history = [...merge(10, R1, 100, 200), ...merge(11, R2, 300, 400), ...operation("fault", { kind: "kill_worker" })];
    const verdict = check(history, cleanState());
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts).toMatchObject({ runs: 2, commits: 2, faults: 1, mergeIntervals: 2 });
    const table = formatCounts(verdict, { seed: "1" });
    for (const kind of VIOLATION_KINDS) expect(table).toContain(kind);
  });

  it("concurrent_writers: two processes inside one target's lock at once", () => {
    expect(kinds(cleanState(), [...merge(10, R1, 100, 300), ...merge(11, R2, 200, 400)])).toContain("concurrent_writers");
  });

  it("a killed worker's open interval ends at its observed exit (no overlap after it)", () => {
    const history = [...merge(10, R1, 100, null), { t: "150", ev: "worker.exit", pid: 10 }, ...merge(11, R2, 200, 300)];
    expect(kinds(cleanState(), history)).toEqual([]);
    const stopped = [...merge(10, R1, 100, null), ...merge(11, R2, 200, 300)];
    expect(kinds(cleanState(), stopped)).toContain("concurrent_writers");
  });

  it("a SIGKILLed worker's open interval ends when the kill is sent, not when the harness notices the exit", () => {
    // Killed at 150; the exit is observed only at 400 (a loaded harness); another writer takes
    // the lock the kernel freed at 200.
    const kill = operation("fault", { kind: "kill_worker", pid: 10 }, "ok", {}, { invoke: 145, complete: 150 });
    const history = [...merge(10, R1, 100, null), ...kill, ...merge(11, R2, 200, 300), { t: "400", ev: "worker.exit", pid: 10 }];
    expect(kinds(cleanState(), history)).toEqual([]);
    // Entering before the kill is still a violation.
    const early = [...merge(10, R1, 100, null), ...merge(11, R2, 120, 300), ...kill];
    expect(kinds(cleanState(), early)).toContain("concurrent_writers");
  });

  it("concurrent_owners: two processes copying one run at once", () => {
    const history: HistoryEvent[] = [
      { t: "100", ev: "merge.enter", pid: 10, target: "/host/a", runId: R1 },
      { t: "150", ev: "merge.enter", pid: 11, target: "/host/b", runId: R1 },
      { t: "200", ev: "merge.exit", pid: 10, target: "/host/a", runId: R1 },
      { t: "250", ev: "merge.exit", pid: 11, target: "/host/b", runId: R1 },
    ];
    expect(kinds(cleanState(), history)).toEqual(["concurrent_owners"]);
  });

  it("double_copy and commit_without_barrier", () => {
    const s = cleanState();
    s.finalizeOps.push({ runId: R1, status: "succeeded", stage: "primary", omitted: false });
    s.finalizeOps = s.finalizeOps.filter((o, i) => !(o.runId === R2 && i === 1));
    expect(kinds(s)).toEqual(["commit_without_barrier", "double_copy"]);
  });

  it("accepted_result_dropped: an accepted result ended failed without a hold", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "failed", errorCode: "archive_extraction_failed" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "terminal_failure" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    expect(kinds(s)).toEqual(["accepted_result_dropped"]);
  });

  it("accepted_not_settled, run_left_running: still finalizing, no hold", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "retryable_failure", failureCode: "provider_export_timeout" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    expect(kinds(s)).toEqual(["accepted_not_settled", "run_left_running"]);
  });

  it("a held run is fine with one open hold of the right cause; duplicate_holds and hold_wrong_cause otherwise", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "workspace_finalizing" };
    s.finalizeOps.pop();
    s.leases[1] = { ...s.leases[1]!, status: "active", sandboxExists: true };
    s.host[WS] = hostAfter([R1]);
    s.actions = [{ id: "a1", runId: R2, cause: OWNER_UNVERIFIED, status: "active" }];
    expect(kinds(s)).toEqual([]);
    s.actions.push({ id: "a2", runId: R2, cause: "something_else", status: "active" });
    expect(kinds(s)).toEqual(["duplicate_holds", "hold_wrong_cause"]);
  });

  it("held_sandbox_destroyed and held_sandbox_reused", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "workspace_finalizing" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    s.actions = [{ id: "a1", runId: R2, cause: OWNER_UNVERIFIED, status: "active" }];
    s.leases[1] = { ...s.leases[1]!, status: "destroyed", sandboxExists: false };
    s.leases.push({ id: "l3", runId: R3, status: "released", provider: "local", providerLeaseId: "local-l2", sandboxExists: false });
    expect(kinds(s)).toEqual(["held_sandbox_destroyed", "held_sandbox_reused"]);
  });

  it("a held run's lease released as stopped-and-retained (a confirmed stop receipt) keeps its sandbox: no violation", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "workspace_finalizing" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    s.actions = [{ id: "a1", runId: R2, cause: OWNER_UNVERIFIED, status: "active" }];
    s.leases[1] = { ...s.leases[1]!, status: "released", sandboxExists: true, stoppedAndRetained: true };
    expect(kinds(s)).toEqual([]);
    s.leases[1] = { ...s.leases[1]!, stoppedAndRetained: false };
    expect(kinds(s)).toEqual(["held_sandbox_destroyed"]);
  });


  it("run_left_queued, coordinator_unsettled and lease_active_without_run", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "queued", errorCode: null, provider: "local" });
    s.runs.push({ id: "44444444-4444-4444-8444-444444444444", issueId: ISSUE, status: "failed", errorCode: "agent_exit_nonzero", provider: "local" });
    s.coordinators.push({ runId: "44444444-4444-4444-8444-444444444444", phase: "workspace_finalizing", committedAt: null, failureCode: null });
    s.leases.push({ id: "l4", runId: "44444444-4444-4444-8444-444444444444", status: "active", provider: "local", providerLeaseId: "local-l4", sandboxExists: true });
    expect(kinds(s)).toEqual(["coordinator_unsettled", "died_before_result_unrecovered", "lease_active_without_run", "run_left_queued"]);
  });

  it("R-FO-1: a failed run that says its sandbox is kept has one (retention_claimed_falsely otherwise: the orphan sweep said so of a run killed before its sandbox was acquired)", () => {
    const s = cleanState();
    const said = "The controller running this run is gone and the agent submitted no result; the sandbox is stopped and retained with the agent's files.";
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "process_lost", errorMessage: said, provider: "local" });
    expect(kinds(s)).toEqual(["retention_claimed_falsely"]);
    s.runs[s.runs.length - 1] = { ...s.runs.at(-1)!, errorMessage: "The controller running this run is gone and the agent submitted no result." };
    expect(kinds(s)).toEqual([]);
    s.runs[s.runs.length - 1] = { ...s.runs.at(-1)!, errorMessage: said };
    s.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    s.leases.push({ id: "l3", runId: R3, status: "pending_cleanup", provider: "local", providerLeaseId: "local-l3", sandboxExists: true });
    expect(kinds(s)).toEqual([]);
  });

  it("R-FO-1: a process_lost run with an active lease and no obligation is reported", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "process_lost", provider: "local" });
    s.leases.push({ id: "l3", runId: R3, status: "active", provider: "local", providerLeaseId: "local-l3", sandboxExists: true });
    expect(kinds(s)).toEqual(["died_before_result_unrecovered", "lease_active_without_run"]);
    expect(check([], s).counts.relaxed).toEqual({});
  });

  it("R-FO-1 a run that failed before its result is clean only with one obligation and its lease pinned, its sandbox kept", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "agent_exit_nonzero", provider: "local" });
    s.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    // Pinned (stop-only intent pending) or stopped and retained: clean.
    s.leases.push({ id: "l3", runId: R3, status: "pending_cleanup", provider: "local", providerLeaseId: "local-l3", sandboxExists: true });
    expect(check([], s).violations).toEqual([]);
    s.leases[2] = { ...s.leases[2]!, status: "released", stoppedAndRetained: true };
    expect(check([], s).violations).toEqual([]);
    // Released without the receipt, destroyed, or the sandbox gone: the files are not kept.
    s.leases[2] = { ...s.leases[2]!, status: "released", stoppedAndRetained: false };
    expect(kinds(s)).toContain("died_before_result_unrecovered");
    s.leases[2] = { ...s.leases[2]!, status: "destroyed", sandboxExists: false };
    expect(kinds(s)).toContain("died_before_result_unrecovered");
    // Two obligations for one run.
    s.leases[2] = { ...s.leases[2]!, status: "pending_cleanup", sandboxExists: true };
    s.actions.push({ id: "f4", runId: R3, cause: FILE_RECOVERY, status: "active" });
    expect(kinds(s)).toEqual(["duplicate_holds"]);
  });

  it("R-FO-6 a failed run with an accepted result, or one that never had an allocation, needs no file obligation", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "native_workspace_sync_out_retry_exhausted", provider: "local" });
    s.acceptedResults.push({ runId: R3 });
    s.actions.push({ id: "x3", runId: R3, cause: "native_workspace_sync_out_retry_exhausted", status: "active" });
    s.leases.push({ id: "l3", runId: R3, status: "pending_cleanup", provider: "local", providerLeaseId: "local-l3", sandboxExists: true });
    s.runs.push({ id: "55555555-5555-4555-8555-555555555555", issueId: ISSUE, status: "failed", errorCode: "provider_acquire_failed", provider: "local" });
    // Its acquisition allocated a sandbox it never handed to the run; the sweep destroyed it.
    s.leases.push({ id: "l5", runId: "55555555-5555-4555-8555-555555555555", status: "destroyed", provider: "local", providerLeaseId: "local-l5", sandboxExists: false, handedToRun: false });
    expect(check([], s).violations).toEqual([]);
  });


  it("held_lease_taken: a lease handed to another run while its run's accepted result was not committed, or while it held a failed run's files", () => {
    const s = cleanState();
    s.leases[1] = { ...s.leases[1]!, id: "l1" };
    const at = (ms: number) => new Date(Date.parse("2026-01-01T00:00:00.000Z") + ms).toISOString();
    // R1 committed at 1 s, R2 reuses its lease at 1.5 s: fine.
    s.acquisitions = [
      { runId: R1, leaseId: "l1", at: at(0), reused: false },
      { runId: R2, leaseId: "l1", at: at(1_500), reused: true },
    ];
    expect(kinds(s)).toEqual([]);
    expect(check([], s).counts.reuses).toBe(1);
    // R2 reused it at 0.5 s, before R1's commit at 1 s (R1's coordinator was retrying its export).
    s.acquisitions[1] = { ...s.acquisitions[1]!, at: at(500) };
    expect(kinds(s)).toEqual(["held_lease_taken"]);
    // A failed run's held lease reused.
    const t = cleanState();
    t.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "agent_exit_nonzero", provider: "local" });
    t.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    t.leases.push({ id: "l3", runId: R2, status: "destroyed", provider: "local", providerLeaseId: "local-l3", sandboxExists: false });
    t.acquisitions = [
      { runId: R3, leaseId: "l3", at: at(0), reused: false },
      { runId: R2, leaseId: "l3", at: at(1_500), reused: true },
    ];
    expect(kinds(t)).toContain("held_lease_taken");
  });

  it("held_lease_taken judges the lease's last holder whose agent ran: an attempt requeued before its agent (seed 20261207) took none of its run's files", () => {
    const t = cleanState();
    const at = (ms: number) => new Date(Date.parse("2026-01-01T00:00:00.000Z") + ms).toISOString();
    // R1 committed at 1 s; R3's first attempt reuses the lease at 2 s and is requeued before its
    // agent; its retry on another lease fails. R2 then reuses the lease: it held R1's committed work only.
    t.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "ENOSPC", provider: "local" });
    t.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    t.leases[1] = { ...t.leases[1]!, id: "l1" };
    t.acquisitions = [
      { runId: R1, leaseId: "l1", at: at(0), reused: false },
      { runId: R3, leaseId: "l1", at: at(2_000), reused: true, noAgentRan: true },
      { runId: R2, leaseId: "l1", at: at(3_000), reused: true },
    ];
    expect(kinds(t).filter((k) => k === "held_lease_taken")).toEqual([]);
    // The same reuse after an attempt whose agent did start is the violation.
    t.acquisitions[1] = { runId: R3, leaseId: "l1", at: at(2_000), reused: true };
    expect(kinds(t)).toContain("held_lease_taken");
  });

  it("accepted_result_dropped: an accepted result held only by a cause that does not apply it (a file-recovery obligation after a Stop)", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "cancelled", errorCode: "run_stopped" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "terminal_failure", failureCode: "run_stopped" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    s.leases[1] = { ...s.leases[1]!, status: "released", sandboxExists: true, stoppedAndRetained: true, retainedListed: true };
    s.actions = [{ id: "f2", runId: R2, cause: FILE_RECOVERY, status: "active" }];
    expect(kinds(s)).toEqual(["accepted_result_dropped"]);
    // Held by a copyback-failed hold: kept, not dropped.
    s.actions = [{ id: "c2", runId: R2, cause: "native_workspace_sync_out_failed", status: "active" }];
    expect(kinds(s)).toEqual([]);
  });

  it("retained_invisible: a sandbox on disk that the retained list does not show, or that no live lease names", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" });
    s.acceptedResults.push({ runId: R3 });
    s.coordinators.push({ runId: R3, phase: "committed", committedAt: "2026-01-01T00:00:03.000Z", failureCode: null });
    s.finalizeOps.push({ runId: R3, status: "succeeded", stage: "primary", omitted: false });
    s.host[WS] = hostAfter([R1, R2, R3]);
    // A warm reusable sandbox (released with a confirmed stop, its run committed): fine unlisted.
    s.leases.push({ id: "l3", runId: R3, status: "released", provider: "local", providerLeaseId: "local-l3", sandboxExists: true, stoppedAndRetained: true, leasePolicy: "reuse_by_environment", retainedListed: false });
    expect(kinds(s)).toEqual([]);
    // An ephemeral one stopped during a retry and never destroyed after the commit: invisible.
    s.leases[2] = { ...s.leases[2]!, leasePolicy: "ephemeral" };
    expect(kinds(s)).toEqual(["retained_invisible"]);
    // Listed: fine.
    s.leases[2] = { ...s.leases[2]!, retainedListed: true };
    expect(kinds(s)).toEqual([]);
    // A sandbox directory no live lease names.
    s.strayLocalSandboxes = ["local-l9"];
    expect(kinds(s)).toEqual(["retained_invisible"]);
  });

  it("retained_invisible: a committed run's destroy left to the cleanup sweep (its releaser killed) is no violation; a destroy intent on files nobody committed is", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" });
    s.acceptedResults.push({ runId: R3 });
    s.coordinators.push({ runId: R3, phase: "committed", committedAt: "2026-01-01T00:00:03.000Z", failureCode: null });
    s.finalizeOps.push({ runId: R3, status: "succeeded", stage: "primary", omitted: false });
    s.host[WS] = hostAfter([R1, R2, R3]);
    s.leases.push({ id: "l3", runId: R3, status: "pending_cleanup", provider: "local", providerLeaseId: "local-l3", sandboxExists: true, leasePolicy: "ephemeral", retainedListed: false, destroyPending: true });
    expect(kinds(s)).toEqual([]);
    // Without the recorded destroy intent it is a sandbox nobody will clean up or show.
    s.leases[2] = { ...s.leases[2]!, destroyPending: false };
    expect(kinds(s)).toEqual(["retained_invisible"]);
    // A destroy intent on a run that did not commit (its agent ran): invisible files, a violation.
    s.leases[2] = { ...s.leases[2]!, destroyPending: true };
    s.runs[2] = { ...s.runs[2]!, status: "failed", errorCode: "process_lost" };
    s.coordinators[2] = { ...s.coordinators[2]!, phase: "terminal_failure", committedAt: null, failureCode: "process_lost" };
    s.acceptedResults.pop();
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1, R2]);
    s.actions = [{ id: "a3", runId: R3, cause: FILE_RECOVERY, status: "active" }];
    expect(kinds(s)).toContain("retained_invisible");
  });

  it("an attempt that went back to the queue before its agent started (a database outage) held nothing: its destroyed lease is no held_sandbox_destroyed", () => {
    const s = cleanState();
    s.runs[1] = { ...s.runs[1]!, status: "running" };
    s.coordinators[1] = { ...s.coordinators[1]!, phase: "workspace_finalizing" };
    s.finalizeOps.pop();
    s.host[WS] = hostAfter([R1]);
    s.actions = [{ id: "a1", runId: R2, cause: OWNER_UNVERIFIED, status: "active" }];
    // The first attempt's lease (destroyed by policy before the requeue) and the held attempt's.
    s.leases[1] = { ...s.leases[1]!, status: "destroyed", sandboxExists: false, agentNeverStarted: true };
    s.leases.push({ id: "l2b", runId: R2, status: "released", provider: "local", providerLeaseId: "local-l2b", sandboxExists: true, stoppedAndRetained: true, retainedListed: true });
    expect(kinds(s)).toEqual([]);
    // The same destroyed lease with an agent having run on it: the held run's files are gone.
    s.leases[1] = { ...s.leases[1]!, agentNeverStarted: false };
    expect(kinds(s)).toEqual(["held_sandbox_destroyed"]);
  });

  it("died_before_result_unrecovered: a run that failed before its result keeps the sandbox its agent ran in; the destroyed lease of an attempt requeued before its agent started is no violation", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "process_lost", provider: "local" });
    s.coordinators.push({ runId: R3, phase: "terminal_failure", committedAt: null, failureCode: "process_lost" });
    s.actions = [{ id: "a3", runId: R3, cause: FILE_RECOVERY, status: "active" }];
    s.leases.push({ id: "l3a", runId: R3, status: "destroyed", provider: "local", providerLeaseId: "local-l3a", sandboxExists: false, handedToRun: true, agentNeverStarted: true });
    s.leases.push({ id: "l3b", runId: R3, status: "released", provider: "local", providerLeaseId: "local-l3b", sandboxExists: true, handedToRun: true, stoppedAndRetained: true, retainedListed: true });
    expect(kinds(s)).toEqual([]);
    s.leases[2] = { ...s.leases[2]!, agentNeverStarted: false };
    expect(kinds(s)).toEqual(["died_before_result_unrecovered", "held_sandbox_destroyed"]);
  });

  it("a held sandbox the harness's operator verified and then discarded is no violation; unverified it is", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "failed", errorCode: "process_lost", provider: "local" });
    s.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    s.leases.push({ id: "l3", runId: R3, status: "destroyed", provider: "local", providerLeaseId: "local-l3", sandboxExists: false, discardedByOperator: true });
    const verified = operation("operator.discard", { leaseId: "l3", runId: R3, verified: true });
    const verdict = check(verified, s);
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts.operatorDiscards).toBe(1);
    expect(kinds(s)).toEqual(["died_before_result_unrecovered", "held_sandbox_destroyed"]);
  });

  it("a verified operator Discard left unrecorded after the quiet period (lease released with its intent, sandbox gone or not) is a violation, discard_unfinished, reported once; unverified, its sandbox was lost too", () => {
    const s = cleanState();
    s.runs.push({ id: R3, issueId: ISSUE, status: "cancelled", errorCode: "run_stopped", provider: "local" });
    s.actions.push({ id: "f3", runId: R3, cause: FILE_RECOVERY, status: "active" });
    s.leases.push({ id: "l3", runId: R3, status: "released", provider: "local", providerLeaseId: "local-l3", sandboxExists: false, stoppedAndRetained: true, retainedListed: true, discardUnrecorded: true });
    // Its answer lost after the destroy (discard_unrecorded): it may have happened.
    const verified = operation("operator.discard", { leaseId: "l3", runId: R3, verified: true }, "info", { code: "discard_unrecorded" });
    const verdict = check(verified, s);
    expect(verdict.violations).toEqual([{ kind: "discard_unfinished", detail: expect.stringContaining("lease l3"), runId: R3 }]);
    expect(verdict.violations[0]!.detail).toContain("(verified)");
    expect(verdict.violations[0]!.detail).toContain("sandbox gone");
    expect(verdict.counts.relaxed).toEqual({});
    // Interrupted before its destroy (the sandbox still on disk): unfinished all the same.
    s.leases[2] = { ...s.leases[2]!, sandboxExists: true };
    expect(check(verified, s).violations).toEqual([{ kind: "discard_unfinished", detail: expect.stringContaining("sandbox still on disk"), runId: R3 }]);
    // Without the operator's verified record the sandbox was lost as well.
    s.leases[2] = { ...s.leases[2]!, sandboxExists: false };
    expect(kinds(s)).toEqual(["discard_unfinished", "held_sandbox_destroyed"]);
    // Recorded (the sweep finished it): no violation.
    s.leases[2] = { ...s.leases[2]!, status: "destroyed", discardUnrecorded: false, discardedByOperator: true, retainedListed: false };
    expect(check(verified, s).violations).toEqual([]);
  });

  it("counts the acquisitions on the same environment and workspace while a lease released after a transient export failure waited for its run's retry", () => {
    const s = cleanState();
    const at = (ms: number) => new Date(Date.parse("2026-01-01T00:00:00.000Z") + ms).toISOString();
    const shared = { environmentId: "e1", executionWorkspaceId: "w1" };
    s.runs.push({ id: R3, issueId: ISSUE, status: "succeeded", errorCode: null, provider: "local" });
    s.leases = [
      { id: "l1", runId: R1, status: "released", provider: "local", providerLeaseId: "local-l1", sandboxExists: true, stoppedAndRetained: true, leasePolicy: "reuse_by_environment", retainedListed: false, ...shared },
      { id: "l2", runId: R2, status: "released", provider: "local", providerLeaseId: "local-l2", sandboxExists: true, stoppedAndRetained: true, leasePolicy: "reuse_by_environment", retainedListed: false, ...shared },
      { id: "l3", runId: R3, status: "destroyed", provider: "local", providerLeaseId: "local-l3", sandboxExists: false, environmentId: "e2", executionWorkspaceId: "w1" },
    ];
    // R1 released l1 as failed at 0.2 s (its export retry committed at 1 s); R2 got another
    // allocation at 0.5 s (a chance, not taken), R3 on another environment does not count, nor does
    // R2's earlier acquisition at 0.1 s.
    s.releases = [{ runId: R1, leaseId: "l1", at: at(200), outcome: "failed" }];
    s.acquisitions = [
      { runId: R1, leaseId: "l1", at: at(0), reused: false },
      { runId: R2, leaseId: "l2", at: at(100), reused: false },
      { runId: R2, leaseId: "l2", at: at(500), reused: true },
      { runId: R3, leaseId: "l3", at: at(600), reused: false },
    ];
    let verdict = check([], s);
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts).toMatchObject({ unsettledReleases: 1, acquisitionsBesideUnsettled: 1, heldLeaseTaken: 0 });
    // Handed l1 itself: the chance taken, a violation.
    s.acquisitions[2] = { runId: R2, leaseId: "l1", at: at(500), reused: true };
    verdict = check([], s);
    expect(verdict.counts).toMatchObject({ unsettledReleases: 1, acquisitionsBesideUnsettled: 1, heldLeaseTaken: 1 });
    expect(formatCounts(verdict)).toMatch(/of them handed a held lease \(held_lease_taken\)\s+1/);
    // A release after a committed run's copyback (outcome committed) opens no window.
    s.releases = [{ runId: R1, leaseId: "l1", at: at(200), outcome: "committed" }];
    expect(check([], s).counts.unsettledReleases).toBe(0);
  });

  it("history_unpaired: an invoke never completed, a completion without its invoke, a second completion", () => {
    const kill = operation("fault", { kind: "kill_worker", pid: 10 });
    expect(kinds(cleanState(), [...kill])).toEqual([]);
    expect(kinds(cleanState(), [kill[0]!])).toEqual(["history_unpaired"]);
    expect(kinds(cleanState(), [kill[1]!])).toEqual(["history_unpaired"]);
    expect(kinds(cleanState(), [...kill, { ...kill[1]!, t: "99999", type: "fail" }])).toEqual(["history_unpaired"]);
  });

  it("every violation kind has a test (here, in files.test.ts, harness-takeovers.test.ts, daytona-rules.test.ts and hosts.test.ts)", () => {
    expect(VIOLATION_KINDS.length).toBe(40);
  });
});
