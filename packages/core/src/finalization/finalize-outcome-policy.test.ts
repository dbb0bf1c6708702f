// R-ORP-3: what happens to a run's source lease after each finalizeRun outcome, one rule for the
// live path and the reconciler. The lease is kept while another owner copies or a hold needs it.
import { describe, expect, it } from "vitest";
import type { NotFinalizableReason } from "./finalize-policy";
import type { FinalizeOutcome } from "./finalize-outcome";
import { leaseOutcomeAfterFinalize } from "./finalize-outcome-policy";

const ARBITER = {
  kind: "applied",
  issueId: "issue-1",
  from: "in_progress",
  to: "in_review",
  statusVersion: 3,
} as const;

describe("leaseOutcomeAfterFinalize", () => {
  it.each<[string, FinalizeOutcome, "committed" | "failed" | null]>([
    [
      "R-ORP-3: a committed copyback releases the lease as committed",
      {
        kind: "committed",
        barrier: "written",
        operationId: "op-1",
        counts: null,
        arbiter: ARBITER,
      },
      "committed",
    ],
    [
      "R-ORP-3: a commit reusing an earlier barrier releases the lease as committed",
      { kind: "committed", barrier: "reused", operationId: "op-1", counts: null, arbiter: ARBITER },
      "committed",
    ],
    [
      "R-ORP-3: an omitted unsafe export with the result committed releases as committed",
      { kind: "omitted_export_committed", operationId: "op-1", arbiter: ARBITER },
      "committed",
    ],
    [
      "R-ORP-3: an already committed coordinator releases as committed",
      { kind: "already_committed" },
      "committed",
    ],
    [
      "R-ORP-3: a merge conflict releases as failed (stop and retain)",
      { kind: "conflict", operationId: "op-1", conflicts: [] },
      "failed",
    ],
    [
      "R-ORP-3: a terminal failure releases as failed (stop and retain)",
      { kind: "terminal_failure", operationId: null, code: "workspace_copyback_unsafe" },
      "failed",
    ],
    [
      "R-ORP-3: a recorded bounded (retryable) failure releases as failed (stop and retain for the retry)",
      {
        kind: "retryable_failure",
        operationId: "op-1",
        code: "workspace_copyback_transient",
        nextAttemptAt: new Date("2025-03-01T10:00:30Z"),
      },
      "failed",
    ],
    [
      "R-ORP-3: busy on the lock keeps the lease (another owner copies from it)",
      { kind: "busy", reason: "lock_held" },
      null,
    ],
    [
      "R-ORP-3: busy on a live recorded controller keeps the lease",
      { kind: "busy", reason: "owner_alive" },
      null,
    ],
    [
      "R-ORP-3: busy on a changed receipt keeps the lease",
      { kind: "busy", reason: "owner_receipt_changed" },
      null,
    ],
    [
      "R-ORP-3: an unverified owner (stop verification required) keeps the lease for the hold",
      {
        kind: "owner_unverified",
        actionId: "action-1",
        reason: "controller_exited_without_barrier",
      },
      null,
    ],
    [
      "R-ORP-3: an unverified owner on a foreign host keeps the lease",
      { kind: "owner_unverified", actionId: "action-1", reason: "controller_on_other_host" },
      null,
    ],
    [
      "R-ORP-3: an unverified malformed receipt keeps the lease",
      { kind: "owner_unverified", actionId: "action-1", reason: "receipt_malformed" },
      null,
    ],
  ])("%s", (_name, outcome, expected) => {
    expect(leaseOutcomeAfterFinalize(outcome)).toBe(expected);
  });

  it.each<[NotFinalizableReason, "failed" | null]>([
    ["phase_changed", null],
    ["retry_not_due", null],
    ["no_coordinator", "failed"],
    ["no_accepted_result", "failed"],
    ["terminal_failure", "failed"],
    ["barrier_missing", "failed"],
  ])("R-ORP-3: not finalizable (%s) -> %s", (reason, expected) => {
    expect(leaseOutcomeAfterFinalize({ kind: "not_finalizable", reason })).toBe(expected);
  });
});
