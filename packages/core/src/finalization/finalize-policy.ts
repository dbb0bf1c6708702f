// Pure decisions of finalizeRun: where to start under ownership, and what a failed copyback
// leaves behind. The shell (finalize-run.ts) loads the snapshot under the advisory lock.
import type { FinalizationPhase } from "@copyback/db/client";
import { MergeConflictError, type MergeConflict } from "../copyback/merge/errors";
import { classifyCopybackFailure } from "../copyback/merge/classify";
import { errorCodeOf } from "../workspace/workspace-operations";

export interface FinalizeSnapshot {
  /** The coordinator's phase, null when the run has no coordinator. */
  phase: FinalizationPhase | null;
  resultId: string | null;
  nextAttemptAt: Date | null;
  /** copybackProven: the success barrier exists. */
  barrier: boolean;
  now: Date;
}

export type NotFinalizableReason =
  | "no_coordinator"
  | "no_accepted_result"
  | "terminal_failure"
  | "retry_not_due"
  | "barrier_missing"
  /** The coordinator moved between the read and the compare-and-set (another writer). */
  | "phase_changed";

export type FinalizeStartDecision =
  | { kind: "already_committed" }
  /** The barrier exists: skip the export, go straight to arbitration. */
  | { kind: "arbitrate"; from: FinalizationPhase }
  | { kind: "copyback"; from: FinalizationPhase }
  | { kind: "not_finalizable"; reason: NotFinalizableReason };

export function decideFinalizeStart(s: FinalizeSnapshot): FinalizeStartDecision {
  if (s.phase === null) return { kind: "not_finalizable", reason: "no_coordinator" };
  // R-OWN-4: a committed coordinator is never overwritten; terminal is final too.
  if (s.phase === "committed") return { kind: "already_committed" };
  if (s.phase === "terminal_failure") return { kind: "not_finalizable", reason: "terminal_failure" };
  if (s.phase === "observed" || s.resultId === null) return { kind: "not_finalizable", reason: "no_accepted_result" };
  // R-OWN-3: the retry time is read again under ownership; an earlier snapshot cannot start early.
  if (s.phase === "retryable_failure" && s.nextAttemptAt !== null && s.nextAttemptAt.getTime() > s.now.getTime()) {
    return { kind: "not_finalizable", reason: "retry_not_due" };
  }
  // R-OWN-4: the barrier, read again under ownership, means the files already reached the host.
  if (s.barrier) return { kind: "arbitrate", from: s.phase };
  if (s.phase === "arbitrating") return { kind: "not_finalizable", reason: "barrier_missing" };
  return { kind: "copyback", from: s.phase };
}

export const MERGE_CONFLICT_CODE = "workspace_merge_conflict";

export type CopybackFailureDecision =
  | { kind: "conflict"; code: typeof MERGE_CONFLICT_CODE; conflicts: MergeConflict[] }
  | { kind: "retryable"; code: string; nextAttemptAt: Date }
  | { kind: "terminal"; code: string };

/** Provider refusals that no retry can change: the plugin cannot do it, or it is not the pinned one. */
const PERMANENT_PROVIDER_CODES = new Set(["provider_capability_missing", "provider_plugin_mismatch", "provider_identity_mismatch"]);

const FIRST_RETRY_DELAY_MS = 30_000;
const MAX_RETRY_DELAY_MS = 15 * 60_000;

/** When the reconciler may try again after the `attempt`-th finalization attempt failed. */
export function nextFinalizationAttemptAt(now: Date, attempt: number): Date {
  const exponent = Math.max(0, Math.min(attempt - 1, 10));
  return new Date(now.getTime() + Math.min(MAX_RETRY_DELAY_MS, FIRST_RETRY_DELAY_MS * 4 ** exponent));
}

/**
 * R-RR-1: a failure before any host write from a passing cause (already retried in-process up
 * to three attempts) leaves the coordinator retryable for the reconciler; a conflict, an unsafe
 * or after-write failure, a permission failure or anything unrecognised is terminal.
 */
export function decideCopybackFailure(error: unknown, ctx: { attempt: number; now: Date }): CopybackFailureDecision {
  if (error instanceof MergeConflictError) return { kind: "conflict", code: MERGE_CONFLICT_CODE, conflicts: error.conflicts };
  const failure = classifyCopybackFailure(error);
  if (PERMANENT_PROVIDER_CODES.has(errorCodeOf(error, ""))) return { kind: "terminal", code: errorCodeOf(error, "") };
  const code = errorCodeOf(error, `workspace_copyback_${failure.reason}`);
  if (failure.retryable) return { kind: "retryable", code, nextAttemptAt: nextFinalizationAttemptAt(ctx.now, ctx.attempt) };
  return { kind: "terminal", code };
}
