// What a failed copyback attempt leaves behind, written in one transaction as this owner: the
// decision is finalize-policy.ts decideCopybackFailure's; this writes the operation, the
// coordinator, the hold and the run's failure for each kind of failure.
import type { TransactionClient } from "@copyback/db/client";
import { classifyCopybackFailure } from "../copyback/merge/classify";
import { advanceFinalization } from "../records/coordinator";
import { recordRunEvent } from "../records/run-log";
import { finishWorkspaceOperation } from "../records/workspace-operations";
import { holdFailedCopyback } from "./copyback-failed-hold";
import type { OwnedFinalization } from "./finalization-context";
import { bindingReasonOf, PUBLICATION_UNBOUND_CODE } from "./finalize-errors";
import type { FinalizeOutcome } from "./finalize-outcome";
import { decideCopybackFailure, transientFailuresOf, type CopybackFailureDecision } from "./finalize-policy";
import { archiveLimitReached, holdExportFailure, retryBudgetSpent } from "./held-export-failure";

/** At most this many conflicts are stored on the operation and the coordinator (the count is kept). */
const MAX_STORED_CONFLICTS = 200;

export async function failCopyback(f: OwnedFinalization, operationId: string, attempt: number, error: unknown): Promise<FinalizeOutcome> {
  // R-EX-1: the budget counts transient export failures recorded on the coordinator, not its
  // attempts (an interrupted attempt recorded none): finalize-policy.ts MAX_TRANSIENT_EXPORT_FAILURES.
  const { failureDetail } = await f.deps.db.nativeRunFinalization.findUniqueOrThrow({ where: { runId: f.key.runId }, select: { failureDetail: true } });
  const decision = decideCopybackFailure(error, { failuresBefore: transientFailuresOf(failureDetail), now: f.now() });
  // R-RR-1's one classifier: whether the merge had begun changing host files when it failed.
  const hostWritesStarted = classifyCopybackFailure(error).reason === "after_host_writes";
  return f.owned(async (tx): Promise<FinalizeOutcome> => {
    if (decision.kind === "conflict") return failOnConflict(f, tx, operationId, attempt, decision);
    if (decision.kind === "exhausted") return holdExportFailure(f, tx, operationId, retryBudgetSpent(decision));
    if (decision.kind === "terminal" && decision.detail) return holdExportFailure(f, tx, operationId, archiveLimitReached(attempt, decision.code, decision.detail));
    await finishWorkspaceOperation(tx, operationId, { status: "failed", errorCode: decision.code, metadata: { attempt } });
    if (decision.kind === "retryable") {
      await advanceFinalization(tx, {
        runId: f.key.runId,
        from: ["workspace_finalizing"],
        to: "retryable_failure",
        patch: { failureCode: decision.code, failureDetail: { attempt, transientFailures: decision.failures }, nextAttemptAt: decision.nextAttemptAt },
      });
      await recordRunEvent(tx, f.event("warn", "workspace.copyback_failed", `The copyback failed before any host write (${decision.code}); it will be retried.`, {
        operationId,
        errorCode: decision.code,
        nextAttemptAt: decision.nextAttemptAt.toISOString(),
      }));
      return { kind: "retryable_failure", operationId, code: decision.code, nextAttemptAt: decision.nextAttemptAt };
    }
    // R-RW-4: the publication's binding check refused: the task moved on before any host write.
    const bindingReason = decision.code === PUBLICATION_UNBOUND_CODE ? bindingReasonOf(error) : null;
    await advanceFinalization(tx, {
      runId: f.key.runId,
      from: ["workspace_finalizing"],
      to: "terminal_failure",
      patch: { failureCode: decision.code, failureDetail: { attempt, ...decision.detail, ...(bindingReason ? { bindingReason } : {}) } },
    });
    // R-EX-4, R-UI-2: final, so the accepted result is not applied (and the host may hold part
    // of the run's files): the exact sandbox is pinned and the board's hold opens with the failure.
    const held = await holdFailedCopyback(tx, f.key, {
      failure: bindingReason ? "binding_changed" : "copyback_failed",
      failureCode: decision.code,
      hostWritesStarted,
      conflictCount: null,
      conflicts: [],
      bindingReason,
    });
    await recordRunEvent(tx, f.event("error", "workspace.copyback_failed", `The copyback failed (${decision.code}).`, {
      operationId,
      errorCode: decision.code,
      hostWritesStarted,
      actionId: held.actionId,
      leasePinned: held.pin,
    }));
    await f.endRunFailed(tx, decision.code, `The copyback failed (${decision.code}); the saved result and the sandbox are kept for an operator.`);
    return { kind: "terminal_failure", operationId, code: decision.code };
  });
}

/** The sandbox's changes conflict with host changes: nothing was written; the conflicts are stored. */
async function failOnConflict(
  f: OwnedFinalization,
  tx: TransactionClient,
  operationId: string,
  attempt: number,
  decision: Extract<CopybackFailureDecision, { kind: "conflict" }>,
): Promise<FinalizeOutcome> {
  const conflicts = decision.conflicts.slice(0, MAX_STORED_CONFLICTS);
  const detail = { conflicts: conflicts.map((c) => ({ ...c })), conflictCount: decision.conflicts.length };
  await finishWorkspaceOperation(tx, operationId, { status: "failed", errorCode: decision.code, metadata: { attempt, ...detail } });
  await advanceFinalization(tx, {
    runId: f.key.runId,
    from: ["workspace_finalizing"],
    to: "terminal_failure",
    patch: { failureCode: decision.code, failureDetail: detail },
  });
  // R-EX-4, R-UI-2: the accepted result cannot be applied: pinned and held with the failure.
  const held = await holdFailedCopyback(tx, f.key, {
    failure: "merge_conflict",
    failureCode: decision.code,
    hostWritesStarted: false,
    conflictCount: decision.conflicts.length,
    conflicts,
    bindingReason: null,
  });
  await recordRunEvent(tx, f.event("warn", "workspace.merge_conflict", `The sandbox's changes conflict with host changes (${decision.conflicts.length}); nothing was written.`, {
    operationId,
    conflictCount: decision.conflicts.length,
    actionId: held.actionId,
    leasePinned: held.pin,
  }));
  await f.endRunFailed(tx, decision.code, `The sandbox's changes conflict with host changes made since the run started (${decision.conflicts.length}); nothing was written.`);
  return { kind: "conflict", operationId, conflicts: decision.conflicts };
}
