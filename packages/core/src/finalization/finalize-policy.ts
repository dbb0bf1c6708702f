// Pure decisions of finalizeRun: where to start under ownership, and what a failed copyback
// leaves behind. The shells (finalize-run.ts, copyback-failure.ts, commit-finalization.ts) load
// the snapshot under the advisory lock.
import type { FinalizationPhase } from "@copyback/db/client";
import { MergeConflictError, type MergeConflict } from "../copyback/merge/errors";
import { classifyCopybackFailure } from "../copyback/merge/classify";
import { EXPORT_RETRY_EXHAUSTED_CODE } from "../records/coordinator-phases";
import { errorCodeOf } from "../records/workspace-operations";
import { exportLimitFailureOf, type ExportLimitDetail } from "./export-policy";

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

/**
 * R-EX-1: "Transient export failures retry three times, then produce
 * native_workspace_sync_out_retry_exhausted". What is counted, decided here:
 *   - transient export FAILURES, not coordinator attempts. An attempt that never recorded a
 *     failure (its owner was killed mid-export and the run was later taken over or attested, its
 *     lock connection or the database was lost under it) is not a failed export, and spends
 *     nothing: the spec keeps the schedule unchanged across an attestation (R-ATT-3) and lets no
 *     recovery check spend a retry (R-OWN-2, R-OWN-5). The coordinator's `attempt` still counts
 *     every attempt (it names the attempt's operation and staging); the failures are counted
 *     apart, in `failure_detail.transientFailures` (transientFailuresOf).
 *   - three in all: the third transient failure exhausts the budget (the first try and two
 *     retries). "Retry three times" is read with the spec's own boundary test, which "injects
 *     three transient failures at the production finalizer boundary and verifies retained work
 *     plus export-only retry admission": three injected failures must leave the exhausted hold,
 *     which a fourth try would not; R-RR-1 counts the same way ("up to three attempts in total").
 *   - each failure is one coordinator attempt's, after R-RR-1's in-process tries of that attempt;
 *     an export-only retry's re-admission starts a fresh budget (readmitFinalization).
 */
export const MAX_TRANSIENT_EXPORT_FAILURES = 3;

export type CopybackFailureDecision =
  | { kind: "conflict"; code: typeof MERGE_CONFLICT_CODE; conflicts: MergeConflict[] }
  /** `failures`: the transient failures counted with this one (written back as transientFailures). */
  | { kind: "retryable"; code: string; nextAttemptAt: Date; failures: number }
  /** R-EX-1: the budget is spent; `lastCode` names the transport/copyback failure of the last attempt; `attempts`: the transient failures counted. */
  | { kind: "exhausted"; code: typeof EXPORT_RETRY_EXHAUSTED_CODE; lastCode: string; attempts: number }
  /** `detail`: an export over an archive limit names the limit (export-policy.ts exportLimitFailure). */
  | { kind: "terminal"; code: string; detail?: ExportLimitDetail };

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
 * R-EX-1: the transient export failures a coordinator's failure_detail records (see
 * MAX_TRANSIENT_EXPORT_FAILURES). None recorded (a fresh coordinator, one re-admitted by an
 * export-only retry, one that only had interrupted attempts) is 0. A retryable failure written
 * before the count existed ({ attempt } only) counts its attempt number, as the budget then did.
 * A count that is not a non-negative integer grants no retries: it reads as the budget spent.
 */
export function transientFailuresOf(failureDetail: unknown): number {
  if (typeof failureDetail !== "object" || failureDetail === null || Array.isArray(failureDetail)) return 0;
  const detail = failureDetail as Record<string, unknown>;
  if ("transientFailures" in detail) {
    const count = detail.transientFailures;
    return typeof count === "number" && Number.isInteger(count) && count >= 0 ? count : MAX_TRANSIENT_EXPORT_FAILURES;
  }
  const legacy = detail.attempt;
  return typeof legacy === "number" && Number.isInteger(legacy) && legacy > 0 ? legacy : 0;
}

/**
 * A commit that failed after the barrier (the files are on the host; only the transaction that
 * applies the result did not go through: a dropped connection, a restarted database) is retried on
 * its own schedule. Its backoff follows the commit failures counted in failure_detail
 * (`commitFailures`), as an export's follows its failures, never the coordinator's `attempt`, which
 * interrupted and taken-over attempts raise too: after four of them the first retry of a commit
 * waited the schedule's 15-minute cap. The rest of failure_detail (the export failures counted,
 * a readmission) is kept.
 */
export function decideCommitRetry(failureDetail: unknown, now: Date): { nextAttemptAt: Date; failureDetail: Record<string, unknown> } {
  const detail = typeof failureDetail === "object" && failureDetail !== null && !Array.isArray(failureDetail) ? (failureDetail as Record<string, unknown>) : {};
  const before = detail.commitFailures;
  const commitFailures = (typeof before === "number" && Number.isInteger(before) && before >= 0 ? before : 0) + 1;
  return { nextAttemptAt: nextFinalizationAttemptAt(now, commitFailures), failureDetail: { ...detail, commitFailures } };
}

/**
 * R-RR-1: a failure before any host write from a passing cause (already retried in-process up
 * to three attempts) leaves the coordinator retryable for the reconciler, until it is the third
 * transient failure (`failuresBefore`: those recorded before this one): then the budget is spent
 * (R-EX-1, "exhausted"); a conflict, an unsafe or after-write failure, a permission failure or
 * anything unrecognised is terminal. The backoff follows the failures, not the attempts.
 */
export function decideCopybackFailure(error: unknown, ctx: { failuresBefore: number; now: Date }): CopybackFailureDecision {
  if (error instanceof MergeConflictError) return { kind: "conflict", code: MERGE_CONFLICT_CODE, conflicts: error.conflicts };
  // Over an archive limit or with colliding paths: final, with a code that names the limit (never an omission).
  const limit = exportLimitFailureOf(error);
  if (limit) return { kind: "terminal", code: limit.code, detail: limit.detail };
  const failure = classifyCopybackFailure(error);
  if (PERMANENT_PROVIDER_CODES.has(errorCodeOf(error, ""))) return { kind: "terminal", code: errorCodeOf(error, "") };
  const code = errorCodeOf(error, `workspace_copyback_${failure.reason}`);
  if (failure.retryable) {
    const failures = ctx.failuresBefore + 1;
    if (failures >= MAX_TRANSIENT_EXPORT_FAILURES) return { kind: "exhausted", code: EXPORT_RETRY_EXHAUSTED_CODE, lastCode: code, attempts: failures };
    return { kind: "retryable", code, nextAttemptAt: nextFinalizationAttemptAt(ctx.now, failures), failures };
  }
  return { kind: "terminal", code };
}
