// Historical unsafe exports (R-UA-5), pure: may the reconciler replay the accepted result of a run
// an older controller terminalized with `native_workspace_sync_out_unsafe_archive`, by omitting
// that already-rejected export (no provider is contacted) and re-admitting the result?
//
// Replay only while the task is still exactly where that failure left it:
//   - the coordinator is terminal_failure with that code and the run failed with it;
//   - THE binding check (checkRunBinding) holds for the failed run as if it were still running:
//     task open, same agent, bound to this execution, no other queued or running run, the
//     coordinator bound to the run's accepted result;
//   - no newer run of the task exists at all (a later run's work must never be overwritten);
//   - nobody moved the task since: its status is the failure's `blocked` and its status_version
//     is the claim's plus exactly that one move;
//   - the run's contract is unchanged: its prepared descriptor is readable and names the task's
//     current execution workspace, and the agent is not archived;
//   - no explicit operator disposition of the run (a person resolved one of its actions as a
//     false positive or cancelled it);
//   - no other open recovery action on the task (a matching open unsafe-archive action of this very run
//     is not "other": it is stale and is cleared by the replay, never restored).
// An incorrectly resolved old repair action (by the system, or "restored" without a copyback)
// is no disposition: the replay still happens. Permanent refusals are declined once (recorded in
// the run log); another open action only defers (the replay may happen once it is settled).
import type { FinalizationPhase, IssueStatus, RunStatus, RuntimeMode } from "@copyback/db/client";
import { HISTORICAL_UNSAFE_ARCHIVE_CODE } from "../../records/coordinator-phases";
import { isOpenRecoveryActionStatus } from "../../records/actions/open-statuses";
import { checkRunBinding, type BindingRejectCode } from "../../finalization/binding";

/** The cause under which an older controller opened its unsafe-export repair card. */
export const HISTORICAL_UNSAFE_ACTION_CAUSE = HISTORICAL_UNSAFE_ARCHIVE_CODE;

/** Outcomes by which a person deliberately settled a run's recovery (R-EX-3's board dispositions). */
const DISPOSITION_OUTCOMES = new Set(["false_positive", "cancelled"]);
const PERSON_ACTORS = new Set(["user", "local_board"]);

export interface UnsafeReplayAction {
  id: string;
  cause: string;
  status: string;
  runId: string | null;
  resolvedByType: string | null;
  outcome: string | null;
}

export interface UnsafeReplaySnapshot {
  run: { id: string; companyId: string; issueId: string; agentId: string; status: RunStatus; runtimeMode: RuntimeMode; errorCode: string | null } | null;
  issue: {
    id: string;
    companyId: string;
    status: IssueStatus;
    statusVersion: number;
    assigneeAgentId: string | null;
    executionRunId: string | null;
    checkoutRunId: string | null;
    executionWorkspaceId: string | null;
  } | null;
  coordinator: { phase: FinalizationPhase; failureCode: string | null; resultId: string | null } | null;
  acceptedResultId: string | null;
  /** The status_version the run's claim recorded, or null. */
  claimedStatusVersion: number | null;
  /** Other queued or running runs of the task. */
  otherActiveRunIds: string[];
  /** Other runs of the task created after this one, whatever their status. */
  newerRunIds: string[];
  /** The run's prepared descriptor (null: missing or malformed). */
  descriptor: { executionWorkspaceId: string } | null;
  agentArchived: boolean;
  /** The task's open recovery actions and every action of this run (any status). */
  actions: UnsafeReplayAction[];
}

export type UnsafeReplayDeclineReason =
  | "operator_disposition"
  | "newer_run"
  | "ownership_changed"
  | "task_changed"
  | "contract_changed"
  | "result_unbound";

export type UnsafeReplayDecision =
  /** Omit the export, clear `clearActionIds` (the run's stale open unsafe-archive actions), re-admit `resultId`. */
  | { kind: "replay"; resultId: string; clearActionIds: string[] }
  | { kind: "defer"; reason: "other_recovery_action"; actionIds: string[] }
  | { kind: "decline"; reason: UnsafeReplayDeclineReason; message: string }
  /** Not (or no longer) a historical unsafe failure: nothing to do. */
  | { kind: "not_historical" };

const BINDING_REASON: Partial<Record<BindingRejectCode, UnsafeReplayDeclineReason>> = {
  task_closed: "ownership_changed",
  task_reassigned: "ownership_changed",
  newer_execution: "ownership_changed",
  checkout_changed: "ownership_changed",
  newer_run: "newer_run",
  result_unbound: "result_unbound",
};

export function decideUnsafeReplay(s: UnsafeReplaySnapshot): UnsafeReplayDecision {
  const { run, issue, coordinator } = s;
  if (!run || !issue || !coordinator) return { kind: "not_historical" };
  if (coordinator.phase !== "terminal_failure" || coordinator.failureCode !== HISTORICAL_UNSAFE_ARCHIVE_CODE) return { kind: "not_historical" };
  if (run.runtimeMode !== "native" || run.status !== "failed" || run.errorCode !== HISTORICAL_UNSAFE_ARCHIVE_CODE) return { kind: "not_historical" };
  const decline = (reason: UnsafeReplayDeclineReason, message: string): UnsafeReplayDecision => ({ kind: "decline", reason, message });

  const disposition = s.actions.find(
    (a) => a.runId === run.id && !isOpenRecoveryActionStatus(a.status) && a.resolvedByType !== null && PERSON_ACTORS.has(a.resolvedByType) && (a.status === "cancelled" || DISPOSITION_OUTCOMES.has(a.outcome ?? "")),
  );
  if (disposition) return decline("operator_disposition", `An operator settled this run's recovery (${disposition.status === "cancelled" ? "cancelled" : disposition.outcome}); its old result is not replayed.`);
  if (s.newerRunIds.length > 0) return decline("newer_run", "A newer run of the task exists; the old result is not replayed over it.");

  // THE binding check, for the failed run as if it were still running (its status was checked above).
  const binding = checkRunBinding(
    { run: { ...run, status: "running" }, issue, coordinator: { phase: coordinator.phase, resultId: coordinator.resultId }, acceptedResultId: s.acceptedResultId, otherActiveRunIds: s.otherActiveRunIds },
    ["terminal_failure"],
  );
  if (binding.kind === "reject") {
    const reason = BINDING_REASON[binding.code];
    return reason ? decline(reason, binding.message) : { kind: "not_historical" };
  }
  if (s.claimedStatusVersion === null || issue.status !== "blocked" || issue.statusVersion !== s.claimedStatusVersion + 1) {
    return decline("task_changed", "The task was moved since the run failed; the old result is not replayed.");
  }
  if (!s.descriptor || s.agentArchived || s.descriptor.executionWorkspaceId !== issue.executionWorkspaceId) {
    return decline("contract_changed", "The task's workspace or agent changed since the run; the old result is not replayed.");
  }

  const open = s.actions.filter((a) => isOpenRecoveryActionStatus(a.status));
  const stale = open.filter((a) => a.runId === run.id && a.cause === HISTORICAL_UNSAFE_ACTION_CAUSE);
  const others = open.filter((a) => !stale.includes(a));
  if (others.length > 0) return { kind: "defer", reason: "other_recovery_action", actionIds: others.map((a) => a.id) };
  return { kind: "replay", resultId: binding.resultId, clearActionIds: stale.map((a) => a.id) };
}
