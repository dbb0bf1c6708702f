// decideUnsafeReplay (R-UA-5), pure: each clause of the historical unsafe replay on its own.
import { describe, expect, it } from "vitest";
import { HISTORICAL_UNSAFE_ARCHIVE_CODE } from "../../records/coordinator-phases";
import { decideUnsafeReplay, HISTORICAL_UNSAFE_ACTION_CAUSE, type UnsafeReplayAction, type UnsafeReplaySnapshot } from "./decide-unsafe-replay";

const RUN = "11111111-1111-4111-8111-111111111111";
const ISSUE = "22222222-2222-4222-8222-222222222222";
const COMPANY = "33333333-3333-4333-8333-333333333333";
const AGENT = "44444444-4444-4444-8444-444444444444";
const WORKSPACE = "55555555-5555-4555-8555-555555555555";
const RESULT = "66666666-6666-4666-8666-666666666666";

function snapshot(patch: Partial<UnsafeReplaySnapshot> = {}): UnsafeReplaySnapshot {
  return {
    run: { id: RUN, companyId: COMPANY, issueId: ISSUE, agentId: AGENT, status: "failed", runtimeMode: "native", errorCode: HISTORICAL_UNSAFE_ARCHIVE_CODE },
    issue: { id: ISSUE, companyId: COMPANY, status: "blocked", statusVersion: 3, assigneeAgentId: AGENT, executionRunId: RUN, checkoutRunId: null, executionWorkspaceId: WORKSPACE },
    coordinator: { phase: "terminal_failure", failureCode: HISTORICAL_UNSAFE_ARCHIVE_CODE, resultId: RESULT },
    acceptedResultId: RESULT,
    claimedStatusVersion: 2,
    otherActiveRunIds: [],
    newerRunIds: [],
    descriptor: { executionWorkspaceId: WORKSPACE },
    agentArchived: false,
    actions: [],
    ...patch,
  };
}

function action(patch: Partial<UnsafeReplayAction>): UnsafeReplayAction {
  return { id: "a-1", cause: HISTORICAL_UNSAFE_ACTION_CAUSE, status: "active", runId: RUN, resolvedByType: null, outcome: null, ...patch };
}

describe("decideUnsafeReplay", () => {
  it("R-UA-5 replays the accepted result of a historical unsafe failure whose task is where the failure left it", () => {
    expect(decideUnsafeReplay(snapshot())).toEqual({ kind: "replay", resultId: RESULT, clearActionIds: [] });
  });

  it("R-UA-5 clears the run's matching open unsafe-archive actions instead of restoring them (an active old repair card does not prevent the replay)", () => {
    const decision = decideUnsafeReplay(snapshot({ actions: [action({ id: "card" }), action({ id: "chip", status: "escalated" })] }));
    expect(decision).toEqual({ kind: "replay", resultId: RESULT, clearActionIds: ["card", "chip"] });
  });

  it("R-UA-5 an incorrectly resolved old repair action (by the system, or 'restored' without a copyback) is no disposition: it still replays", () => {
    for (const old of [
      action({ status: "resolved", resolvedByType: "system", outcome: "stale_owner_receipt" }),
      action({ status: "resolved", resolvedByType: "user", outcome: "restored" }),
      action({ status: "resolved", resolvedByType: null, outcome: null }),
    ]) {
      expect(decideUnsafeReplay(snapshot({ actions: [old] }))).toMatchObject({ kind: "replay", clearActionIds: [] });
    }
  });

  it("R-UA-5 an explicit operator disposition (false positive, cancelled) of the run prevents replay", () => {
    for (const disposed of [
      action({ status: "resolved", resolvedByType: "user", outcome: "false_positive" }),
      action({ status: "resolved", resolvedByType: "local_board", outcome: "cancelled" }),
      action({ status: "cancelled", resolvedByType: "user", outcome: null, cause: "anything" }),
    ]) {
      expect(decideUnsafeReplay(snapshot({ actions: [disposed] }))).toMatchObject({ kind: "decline", reason: "operator_disposition" });
    }
    // Another run's disposition is not this run's.
    expect(decideUnsafeReplay(snapshot({ actions: [action({ runId: "other", status: "resolved", resolvedByType: "user", outcome: "false_positive" })] }))).toMatchObject({ kind: "replay" });
  });

  it("R-UA-5 a newer run of the task, whatever its status, prevents replay", () => {
    expect(decideUnsafeReplay(snapshot({ newerRunIds: ["later"] }))).toMatchObject({ kind: "decline", reason: "newer_run" });
    expect(decideUnsafeReplay(snapshot({ otherActiveRunIds: ["queued"] }))).toMatchObject({ kind: "decline", reason: "newer_run" });
  });

  it("R-UA-5 changed task ownership prevents replay: reassigned, closed, bound to another execution, another checkout", () => {
    const issue = snapshot().issue!;
    for (const changed of [
      { ...issue, assigneeAgentId: "someone-else" },
      { ...issue, status: "done" as const },
      { ...issue, status: "cancelled" as const },
      { ...issue, executionRunId: "other-run" },
      { ...issue, checkoutRunId: "other-run" },
    ]) {
      expect(decideUnsafeReplay(snapshot({ issue: changed }))).toMatchObject({ kind: "decline", reason: "ownership_changed" });
    }
  });

  it("R-UA-5 a task a person moved since the failure (another status or another status version) prevents replay", () => {
    const issue = snapshot().issue!;
    expect(decideUnsafeReplay(snapshot({ issue: { ...issue, status: "todo" } }))).toMatchObject({ kind: "decline", reason: "task_changed" });
    expect(decideUnsafeReplay(snapshot({ issue: { ...issue, statusVersion: 5 } }))).toMatchObject({ kind: "decline", reason: "task_changed" });
    expect(decideUnsafeReplay(snapshot({ claimedStatusVersion: null }))).toMatchObject({ kind: "decline", reason: "task_changed" });
  });

  it("R-UA-5 a changed contract prevents replay: another execution workspace, a missing descriptor, an archived agent", () => {
    const issue = snapshot().issue!;
    expect(decideUnsafeReplay(snapshot({ issue: { ...issue, executionWorkspaceId: "other-ws" } }))).toMatchObject({ kind: "decline", reason: "contract_changed" });
    expect(decideUnsafeReplay(snapshot({ descriptor: null }))).toMatchObject({ kind: "decline", reason: "contract_changed" });
    expect(decideUnsafeReplay(snapshot({ agentArchived: true }))).toMatchObject({ kind: "decline", reason: "contract_changed" });
  });

  it("R-UA-5 a coordinator not bound to the run's accepted result is never replayed", () => {
    expect(decideUnsafeReplay(snapshot({ acceptedResultId: null }))).toMatchObject({ kind: "decline", reason: "result_unbound" });
    expect(decideUnsafeReplay(snapshot({ coordinator: { phase: "terminal_failure", failureCode: HISTORICAL_UNSAFE_ARCHIVE_CODE, resultId: "other" } }))).toMatchObject({
      kind: "decline",
      reason: "result_unbound",
    });
  });

  it("R-UA-5 another active recovery action on the task defers the replay (the run's own unsafe-archive action does not)", () => {
    const other = action({ id: "exhausted", cause: "native_workspace_sync_out_retry_exhausted" });
    const otherRunsCard = action({ id: "older-card", runId: "older-run" });
    expect(decideUnsafeReplay(snapshot({ actions: [other, action({ id: "card" })] }))).toEqual({ kind: "defer", reason: "other_recovery_action", actionIds: ["exhausted"] });
    expect(decideUnsafeReplay(snapshot({ actions: [otherRunsCard] }))).toEqual({ kind: "defer", reason: "other_recovery_action", actionIds: ["older-card"] });
  });

  it("R-UA-5 only the historical code qualifies: other terminal failures, settled or live coordinators and other run states are not replayed", () => {
    const c = snapshot().coordinator!;
    for (const coordinator of [
      { ...c, failureCode: "native_workspace_sync_out_retry_exhausted" },
      { ...c, failureCode: "native_workspace_sync_out_too_many_entries" },
      { ...c, failureCode: "unsafe_archive" },
      { ...c, phase: "committed" as const },
      { ...c, phase: "arbitrating" as const, failureCode: null },
    ]) {
      expect(decideUnsafeReplay(snapshot({ coordinator }))).toEqual({ kind: "not_historical" });
    }
    const r = snapshot().run!;
    for (const run of [{ ...r, status: "running" as const }, { ...r, errorCode: "process_lost" }, { ...r, runtimeMode: "legacy" as const }]) {
      expect(decideUnsafeReplay(snapshot({ run }))).toEqual({ kind: "not_historical" });
    }
    expect(decideUnsafeReplay(snapshot({ run: null }))).toEqual({ kind: "not_historical" });
    expect(decideUnsafeReplay(snapshot({ coordinator: null }))).toEqual({ kind: "not_historical" });
  });
});
