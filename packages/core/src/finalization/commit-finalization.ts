// The commit once the success barrier stands: arbitration, coordinator committed and the run
// succeeded in one transaction as this owner (R-OWN-9); a commit that fails is terminal when the
// result was refused, and retried on its own schedule otherwise.
import { withTransaction, type Prisma } from "@copyback/db/client";
import { DomainError, isDomainError } from "../errors";
import { resolveOwnerHoldsOnCommit } from "../records/actions";
import { resolveExportRetryOnCommit } from "../records/actions-export-retry";
import { advanceFinalization } from "../records/coordinator";
import type { FinalizationPhase } from "../records/coordinator-phases";
import { recordRunEvent } from "../records/run-log";
import { arbitrateRunResult } from "../records/status-arbiter";
import { errorCodeOf } from "../records/workspace-operations";
import { completeRun } from "../runs/settle-run";
import { holdFailedCopyback } from "./copyback-failed-hold";
import type { OwnedFinalization } from "./finalization-context";
import { FINALIZATION_PHASE_CHANGED, isOwnershipLoss, isPhaseChange } from "./finalize-errors";
import type { FinalizeOutcome, MergeCounts } from "./finalize-outcome";
import { decideCommitRetry } from "./finalize-policy";

/** How the barrier came to be: written by this attempt, found from an earlier one, or an omitted export's (R-UA-3). */
export type CommitBarrier = { barrier: "written" | "reused"; counts: MergeCounts | null } | { omitted: true };

/** Barrier present: arbitration, coordinator committed and the run succeeded, in one transaction. */
export async function commitFinalization(f: OwnedFinalization, from: FinalizationPhase, resultId: string, operationId: string, how: CommitBarrier): Promise<FinalizeOutcome> {
  const { db } = f.deps;
  const { runId } = f.key;
  // A coordinator that still says result_accepted with a barrier present takes the legal path.
  const path: FinalizationPhase[] = from === "result_accepted" ? ["workspace_finalizing", "arbitrating"] : from === "arbitrating" ? [] : ["arbitrating"];
  let phase = from;
  for (const to of path) {
    const moved = await f.owned((tx) => advanceFinalization(tx, { runId, from: [phase], to }));
    if (!moved) return { kind: "not_finalizable", reason: "phase_changed" };
    phase = to;
  }
  try {
    const arbiter = await withTransaction(db, async (tx) => {
      // R-OWN-9: publication checks the lock connection and the durable token.
      await f.ownership.assertPublishable(tx);
      const verdict = await arbitrateRunResult(tx, { runId, resultId });
      if (!(await advanceFinalization(tx, { runId, from: ["arbitrating"], to: "committed" }))) {
        throw new DomainError("conflict", FINALIZATION_PHASE_CHANGED, "The coordinator left arbitrating during the commit.");
      }
      await completeRun(tx, { runId });
      // R-ORP-3: verified finalization clears the run's unverified-owner holds after commitment.
      await resolveOwnerHoldsOnCommit(tx, { companyId: f.key.companyId, runId });
      // R-EX-2: an export-only retry's hold resolves with the same run's commit.
      await resolveExportRetryOnCommit(tx, { companyId: f.key.companyId, runId });
      await recordRunEvent(tx, f.event("info", "run.committed", "Finalization committed: the files are on the host and the result is applied.", {
        operationId,
        omitted: "omitted" in how,
      }));
      return verdict;
    });
    return "omitted" in how
      ? { kind: "omitted_export_committed", operationId, arbiter }
      : { kind: "committed", barrier: how.barrier, operationId, counts: how.counts, arbiter };
  } catch (error) {
    if (isOwnershipLoss(error) || isPhaseChange(error)) throw error;
    return failArbitration(f, operationId, error);
  }
}

/** The barrier stands; only the commit failed. A domain refusal is final, anything else is retried later. */
async function failArbitration(f: OwnedFinalization, operationId: string, error: unknown): Promise<FinalizeOutcome> {
  const { runId } = f.key;
  const code = errorCodeOf(error, "finalization_commit_failed");
  const { failureDetail } = await f.deps.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId }, select: { failureDetail: true } });
  return f.owned(async (tx): Promise<FinalizeOutcome> => {
    if (isDomainError(error)) {
      await advanceFinalization(tx, { runId, from: ["arbitrating"], to: "terminal_failure", patch: { failureCode: code } });
      // R-EX-4, R-UI-2: the files are on the host (the barrier stands) but the accepted result was
      // refused: pinned and held with the failure, through the same path as the other terminal failures.
      const barrier = await tx.workspaceOperation.findUnique({ where: { id: operationId }, select: { metadata: true } });
      const hostWritesStarted = barrierWroteHost(barrier?.metadata);
      const held = await holdFailedCopyback(tx, f.key, {
        failure: "result_refused",
        failureCode: code,
        hostWritesStarted,
        conflictCount: null,
        conflicts: [],
        bindingReason: null,
      });
      await recordRunEvent(tx, f.event("error", "finalization.commit_failed", `Applying the result failed (${code}).`, {
        errorCode: code,
        operationId,
        hostWritesStarted,
        actionId: held.actionId,
        leasePinned: held.pin,
      }));
      await f.endRunFailed(tx, code, `Applying the result to the task failed (${code}); the saved result and the sandbox are kept for an operator.`);
      return { kind: "terminal_failure", operationId: null, code };
    }
    const retry = decideCommitRetry(failureDetail, f.now());
    const nextAttemptAt = retry.nextAttemptAt;
    await advanceFinalization(tx, {
      runId,
      from: ["arbitrating"],
      to: "retryable_failure",
      patch: { failureCode: code, failureDetail: retry.failureDetail as Prisma.InputJsonObject, nextAttemptAt },
    });
    await recordRunEvent(tx, f.event("warn", "finalization.commit_failed", `Applying the result failed (${code}); it will be retried.`, { errorCode: code }));
    return { kind: "retryable_failure", operationId: null, code, nextAttemptAt };
  });
}

/**
 * Whether the copyback whose success barrier this is changed host files: only a barrier that
 * recorded an unchanged (or omitted) copyback did not; an unreadable record counts as written, the
 * side that keeps the operator looking (R-EX-4).
 */
function barrierWroteHost(metadata: unknown): boolean {
  return !(typeof metadata === "object" && metadata !== null && (metadata as { unchanged?: unknown }).unchanged === true);
}
