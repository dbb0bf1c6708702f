// Which status a task takes from the end of a run: the pure half of the status arbiter.
// A run's outcome is applied only while the task still belongs to that run: it is the issue's
// execution run, it is not closed (done / cancelled), and nobody moved it since the claim
// (status_version equals the version the claim recorded). Otherwise the task stays as it is and
// the reason is recorded; a human's or a newer run's decision always wins over a late result.
import type { IssueStatus } from "@copyback/db/client";

/** An accepted result's outcome, or "failed" for a run that ended without one (failRun). */
export type RunOutcome = "in_review" | "done" | "blocked" | "failed";

export interface IssueStatusSnapshot {
  runId: string;
  outcome: RunOutcome;
  issue: {
    status: IssueStatus;
    statusVersion: number;
    executionRunId: string | null;
  };
  /** The status_version the claim recorded for this run; null when the run never claimed the task. */
  claimedStatusVersion: number | null;
}

export type NotAppliedReason =
  | "not_execution_run"
  | "task_closed"
  | "never_claimed"
  | "status_changed_since_claim";

export type IssueStatusDecision =
  | { kind: "apply"; from: IssueStatus; to: IssueStatus }
  | { kind: "keep"; status: IssueStatus; reason: NotAppliedReason };

const TARGET: Readonly<Record<RunOutcome, IssueStatus>> = {
  in_review: "in_review",
  done: "done",
  blocked: "blocked",
  // A failed run hands the task back to people: blocked, with the run's error on record.
  failed: "blocked",
};

export function decideIssueStatus(snapshot: IssueStatusSnapshot): IssueStatusDecision {
  const { issue } = snapshot;
  const keep = (reason: NotAppliedReason): IssueStatusDecision => ({ kind: "keep", status: issue.status, reason });
  if (issue.executionRunId !== snapshot.runId) return keep("not_execution_run");
  if (issue.status === "done" || issue.status === "cancelled") return keep("task_closed");
  if (snapshot.claimedStatusVersion === null) return keep("never_claimed");
  if (issue.statusVersion !== snapshot.claimedStatusVersion) return keep("status_changed_since_claim");
  return { kind: "apply", from: issue.status, to: TARGET[snapshot.outcome] };
}
