import { describe, expect, it } from "vitest";
import type { IssueStatus } from "@copyback/db/client";
import { decideIssueStatus, type IssueStatusDecision, type IssueStatusSnapshot, type RunOutcome } from "./status-policy";

const RUN = "run-1";
const owned = (overrides: Partial<IssueStatusSnapshot["issue"]> = {}, outcome: RunOutcome = "in_review"): IssueStatusSnapshot => ({
  runId: RUN,
  outcome,
  issue: { status: "in_progress", statusVersion: 4, executionRunId: RUN, ...overrides },
  claimedStatusVersion: 4,
});

describe("decideIssueStatus", () => {
  it.each<[RunOutcome, IssueStatus]>([
    ["in_review", "in_review"],
    ["done", "done"],
    ["blocked", "blocked"],
    ["failed", "blocked"],
  ])("applies outcome %s as %s while the run still owns the task", (outcome, to) => {
    expect(decideIssueStatus(owned({}, outcome))).toEqual<IssueStatusDecision>({ kind: "apply", from: "in_progress", to });
  });

  it.each<[string, IssueStatusSnapshot, IssueStatusDecision]>([
    [
      "another run executes the task",
      owned({ executionRunId: "run-2" }),
      { kind: "keep", status: "in_progress", reason: "not_execution_run" },
    ],
    [
      "no run executes the task",
      owned({ executionRunId: null }),
      { kind: "keep", status: "in_progress", reason: "not_execution_run" },
    ],
    [
      "the task was cancelled",
      owned({ status: "cancelled", statusVersion: 5 }),
      { kind: "keep", status: "cancelled", reason: "task_closed" },
    ],
    [
      "the task is already done (even at the claimed version)",
      owned({ status: "done" }),
      { kind: "keep", status: "done", reason: "task_closed" },
    ],
    [
      "someone moved the task since the claim",
      owned({ status: "blocked", statusVersion: 5 }),
      { kind: "keep", status: "blocked", reason: "status_changed_since_claim" },
    ],
    [
      "the run never recorded a claim",
      { ...owned(), claimedStatusVersion: null },
      { kind: "keep", status: "in_progress", reason: "never_claimed" },
    ],
  ])("keeps the task when %s", (_, snapshot, expected) => {
    expect(decideIssueStatus(snapshot)).toEqual(expected);
  });

  it("a failed run never unblocks or closes a task it lost", () => {
    const decision = decideIssueStatus({ ...owned({ executionRunId: "run-2" }, "failed") });
    expect(decision.kind).toBe("keep");
  });
});
