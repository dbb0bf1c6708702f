// finalizeRun: the finalization of a native run whose result was accepted (DESIGN.md section 3).
// In order:
//   1. ownership (finalization-owner.ts): the advisory lock on a dedicated connection and the
//      owner receipt; busy -> { kind: "busy" }, nothing written (R-OWN-1, R-OWN-2); a leftover
//      receipt nobody can prove stopped -> the unverified-owner hold (unverified-owner-hold.ts);
//   2. under ownership, the coordinator and the barrier are read again (R-OWN-3, R-OWN-4):
//      committed -> nothing to do; barrier present -> straight to arbitration;
//   3. copyback: coordinator -> workspace_finalizing, a `workspace_finalize` operation, then one
//      attempt's export, staging and merge (copyback-attempt.ts); a failed attempt is written by
//      copyback-failure.ts;
//   4. the succeeded operation IS the barrier; coordinator -> arbitrating; then ONE transaction:
//      ownership re-checked (R-OWN-9), status arbiter, coordinator -> committed, run succeeded
//      (commit-finalization.ts).
// Lease release by policy is the caller's (releaseLeaseByPolicy after this returns).
import type { Prisma, TransactionClient } from "@copyback/db/client";
import { isDatabaseFailure } from "../database-failure";
import { DomainError, notFound } from "../errors";
import type { ProcessIdentity } from "../process/process-identity";
import { readProcessIdentity } from "../process/read-process-identity";
import { advanceFinalization } from "../records/coordinator";
import type { FinalizationPhase } from "../records/coordinator-phases";
import { copybackProven } from "../records/copyback-proven";
import { recordRunEvent } from "../records/run-log";
import { closeInterruptedFinalizeOperations, finishWorkspaceOperation, startWorkspaceOperation } from "../records/workspace-operations";
import { recordPathChanges } from "../workspace/path-history";
import { commitFinalization } from "./commit-finalization";
import { exportAndMerge, type CopybackResult } from "./copyback-attempt";
import { failCopyback } from "./copyback-failure";
import { exportTimeoutOf } from "./export-deadline";
import { EXPORT_OMITTED_MESSAGE } from "./export-policy";
import { OwnedFinalization, type FinalizeRunDeps } from "./finalization-context";
import { discardOwnerConnection, openOwnerConnection, takeFinalizationOwnership, type OwnershipKey } from "./finalization-owner";
import { FINALIZE_CHANGES_KEY, recordFinalizeChanges } from "./finalize-changes";
import { isOwnershipLoss } from "./finalize-errors";
import type { FinalizeOutcome } from "./finalize-outcome";
import { decideFinalizeStart } from "./finalize-policy";
import { holdUnverifiedOwner } from "./unverified-owner-hold";

export type { FinalizeRunDeps, ProviderLookup } from "./finalization-context";
export type { FinalizeOutcome, MergeCounts } from "./finalize-outcome";
export { isOwnershipLoss, PUBLICATION_UNBOUND_CODE } from "./finalize-errors";

export async function finalizeRun(deps: FinalizeRunDeps, input: { runId: string }): Promise<FinalizeOutcome> {
  const exportTimeoutMs = exportTimeoutOf(deps.exportTimeoutMs);
  // The lock connection (R-OWN-6) is set up while the run is read, not after (one wait instead
  // of two); it is only a connection until takeFinalizationOwnership takes the lock on it.
  const connection = openOwnerConnection(deps.databaseUrl);
  let key: OwnershipKey;
  let controller: ProcessIdentity | null;
  try {
    const run = await deps.db.heartbeatRun.findUnique({
      where: { id: input.runId },
      select: { id: true, companyId: true, nativeIssueId: true, runtimeMode: true },
    });
    if (!run) throw notFound("Run");
    if (run.runtimeMode !== "native") {
      throw new DomainError("invalid", "run_not_native", "Only native runs finalize through the copyback coordinator.");
    }
    key = { companyId: run.companyId, runId: run.id, issueId: run.nativeIssueId };
    controller = deps.controller ?? (await readProcessIdentity(process.pid));
    if (!controller) {
      throw new DomainError("unavailable", "controller_identity_unknown", "This process's identity could not be read from /proc.");
    }
  } catch (error) {
    await discardOwnerConnection(connection);
    throw error;
  }
  const taken = await takeFinalizationOwnership({ db: deps.db, databaseUrl: deps.databaseUrl, controller, connection, ...platformOf(deps) }, key);
  if (taken.kind === "busy") return { kind: "busy", reason: taken.reason };
  if (taken.kind === "owner_unverified") return holdUnverifiedOwner(deps.db, key, taken);
  if (taken.takeover !== "none") {
    await recordRunEvent(deps.db, {
      companyId: key.companyId,
      runId: key.runId,
      level: "info",
      code: "finalization.takeover",
      message:
        taken.takeover === "resume_same_boot"
          ? "This controller resumed the finalization it joined before (its receipt could not be cleared then)."
          : "The previous controller exited after its copyback finished (the success barrier exists); finalization continues.",
      payload: { reason: taken.takeover },
    });
  }
  try {
    const finalization = new OwnedFinalization(deps, key, taken.ownership, exportTimeoutMs);
    try {
      return await decideAndRun(finalization);
    } finally {
      // R-OWN-9: all of the copyback's work, its staging removal included, ends before the token goes.
      await finalization.staging.join();
    }
  } finally {
    // R-OWN-9: everything above (the copyback included) has been awaited before the token goes.
    await taken.ownership.release();
  }
}

/** R-RW-1: the receipt names the platform deployment only when this controller runs on one. */
function platformOf(deps: FinalizeRunDeps): { platform?: NonNullable<FinalizeRunDeps["platform"]> } {
  return deps.platform ? { platform: deps.platform } : {};
}

async function decideAndRun(f: OwnedFinalization): Promise<FinalizeOutcome> {
  const { db } = f.deps;
  // R-OWN-3, R-OWN-4: read again under ownership, never from an earlier snapshot.
  // Two independent reads: side by side on the pool (one round trip of waiting, not two).
  const [coordinator, barrier] = await Promise.all([db.nativeRunFinalization.findUnique({ where: { runId: f.key.runId } }), copybackProven(db, f.key)]);
  const decision = decideFinalizeStart({
    phase: coordinator?.phase ?? null,
    resultId: coordinator?.resultId ?? null,
    nextAttemptAt: coordinator?.nextAttemptAt ?? null,
    barrier,
    now: f.now(),
  });
  switch (decision.kind) {
    case "already_committed":
      return { kind: "already_committed" };
    case "not_finalizable":
      return decision;
    case "arbitrate": {
      await f.owned((tx) => closeInterruptedFinalizeOperations(tx, f.key));
      const barrierOperation = await db.workspaceOperation.findFirstOrThrow({
        where: { ...f.key, phase: "workspace_finalize", status: "succeeded" },
        orderBy: { finishedAt: "desc" },
        select: { id: true },
      });
      return commitFinalization(f, decision.from, coordinator?.resultId as string, barrierOperation.id, { barrier: "reused", counts: null });
    }
    case "copyback":
      return copyback(f, decision.from, coordinator?.resultId as string);
  }
}

/**
 * The number of an attempt's staging directory `staging/<runId>-<n>`: how many `workspace_finalize`
 * operations the run has, this attempt's included (read in the transaction that opened it, under
 * ownership). Never the coordinator's attempt count: re-admission (an export-only retry) resets
 * that to 0, and a re-admitted attempt reusing an earlier attempt's name could have its fresh
 * staging removed by a leftover-staging sweep that judged the old one settled
 * (leftover-staging.ts: a new attempt is always higher). Operations are never deleted, so the
 * number only grows.
 */
async function stagingSequence(tx: TransactionClient, key: OwnershipKey): Promise<number> {
  return tx.workspaceOperation.count({ where: { companyId: key.companyId, runId: key.runId, issueId: key.issueId, phase: "workspace_finalize" } });
}

async function copyback(f: OwnedFinalization, from: FinalizationPhase, resultId: string): Promise<FinalizeOutcome> {
  // The phase move, the attempt it counted and the attempt's `workspace_finalize` operation in
  // one transaction as this owner (one commit instead of three round trips and two commits):
  // an attempt never exists without its operation, nor an operation without its phase.
  const started = await f.owned(async (tx) => {
    await closeInterruptedFinalizeOperations(tx, f.key);
    const moved = await advanceFinalization(tx, { runId: f.key.runId, from: [from], to: "workspace_finalizing", patch: { attempt: "increment" } });
    if (!moved) return null;
    const { attempt } = await tx.nativeRunFinalization.findUniqueOrThrow({ where: { runId: f.key.runId }, select: { attempt: true } });
    const operationId = await startWorkspaceOperation(tx, { ...f.key, phase: "workspace_finalize", metadata: { attempt } });
    return { attempt, operationId, staging: await stagingSequence(tx, f.key) };
  });
  if (!started) return { kind: "not_finalizable", reason: "phase_changed" };
  const { attempt, operationId, staging } = started;
  let result: CopybackResult;
  try {
    result = await exportAndMerge(f, operationId, attempt, staging);
  } catch (error) {
    // Ownership lost mid-copy: nothing is written as this owner any more; the run is left to
    // the reconciler, which judges the receipt (R-OWN-8, R-OWN-11).
    if (isOwnershipLoss(error)) throw error;
    // The database failed under the copyback (a dropped connection, a restarting server): that
    // says nothing about the export, so no failure is recorded; the run is left to the
    // reconciler, which finds the attempt interrupted and copies again (torture suite, P2039).
    if (isDatabaseFailure(error)) throw error;
    return failCopyback(f, operationId, attempt, error);
  }

  // The counts stay at the top level (older readers); `changes` names the paths (finalize-changes.ts).
  const metadata: Prisma.InputJsonObject =
    result.kind === "omitted"
      ? { attempt, written: 0, deleted: 0, unchanged: true, omitted: true, [FINALIZE_CHANGES_KEY]: recordFinalizeChanges([], []) }
      : { attempt, ...result.counts, stage: result.stage, ...(result.exported ? { export: result.exported } : {}), [FINALIZE_CHANGES_KEY]: result.changes };
  // The succeeded operation IS the barrier; recorded with the phase move and its run event,
  // as this owner (R-OWN-9: the lock connection answers and the token is still ours).
  await f.owned(async (tx) => {
    await finishWorkspaceOperation(tx, operationId, { status: "succeeded", metadata });
    if (result.kind === "merged") await recordPathChanges(tx, { companyId: f.key.companyId, operationId, ...result.paths });
    await advanceFinalization(tx, { runId: f.key.runId, from: ["workspace_finalizing"], to: "arbitrating" });
    if (result.kind === "omitted") {
      // R-UA-3: info level, no warning; R-UA-4: no host path or link target in it.
      await recordRunEvent(tx, f.event("info", "workspace_export_omitted", EXPORT_OMITTED_MESSAGE, {
        operationId,
        salvageTried: result.salvageTried,
        violationCodes: result.violationCodes,
      }));
    } else {
      const { written, deleted, unchanged } = result.counts;
      await recordRunEvent(tx, f.event("info", "workspace.merged", unchanged
        ? "The sandbox returned no changes; the host workspace was left as it is."
        : `Merged into the host workspace: ${written} written, ${deleted} deleted.`, { operationId, written, deleted, unchanged }));
    }
  });
  return commitFinalization(f, "arbitrating", resultId, operationId, result.kind === "omitted" ? { omitted: true } : { barrier: "written", counts: result.counts });
}
