// How a run ends. `completeRun` closes a run whose finalization committed (inside the commit
// transaction); `failRun` ends a run that cannot finish: the run is failed, its coordinator goes
// to terminal_failure and the task goes through the status arbiter (blocked while still owned).
import type { PrismaClient, RunStatus, TransactionClient } from "@copyback/db/client";
import { withTransaction } from "@copyback/db/client";
import { conflict, notFound } from "../errors";
import { advanceFinalization } from "../records/coordinator";
import type { FinalizationPhase } from "../records/coordinator-phases";
import { arbitrateRunFailure, type ArbiterOutcome } from "../records/status-arbiter";
import { recordActivity, SYSTEM_ACTOR } from "../records/record-activity";
import { recordRunEvent } from "../records/run-log";

export interface FailRunInput {
  runId: string;
  /** Stable error code, stored as heartbeat_runs.error_code and the coordinator's failure_code. */
  code: string;
  message: string;
}

export type FailRunOutcome =
  | { kind: "failed"; arbiter: ArbiterOutcome }
  | { kind: "already_finished"; status: RunStatus };

const UNFINISHED_PHASES: FinalizationPhase[] = [
  "observed",
  "result_accepted",
  "workspace_finalizing",
  "arbitrating",
  "retryable_failure",
];

export function failRun(db: PrismaClient, input: FailRunInput): Promise<FailRunOutcome> {
  return withTransaction(db, (tx) => failRunInTransaction(tx, input));
}

/**
 * failRun inside the caller's transaction: a finalizer that settles its coordinator as
 * terminal_failure ends the run in that same transaction, so a settled coordinator never leaves
 * its run `running` (the coordinator move below is then a no-op).
 */
export async function failRunInTransaction(tx: TransactionClient, input: FailRunInput): Promise<FailRunOutcome> {
  {
    const run = await lockRun(tx, input.runId);
    if (run.status !== "queued" && run.status !== "running") {
      return { kind: "already_finished", status: run.status };
    }
    const coordinator = await tx.nativeRunFinalization.findUnique({
      where: { runId: run.id },
      select: { phase: true },
    });
    // A committed coordinator is never overwritten: its copyback and status already stand.
    if (coordinator?.phase === "committed") {
      throw conflict("run_already_committed", "The run's finalization committed; it cannot fail any more.");
    }
    const now = new Date();
    await tx.heartbeatRun.update({
      where: { id: run.id },
      data: { status: "failed", errorCode: input.code, errorMessage: input.message, finishedAt: now },
    });
    if (coordinator) {
      await advanceFinalization(tx, {
        runId: run.id,
        from: UNFINISHED_PHASES,
        to: "terminal_failure",
        patch: { failureCode: input.code, failureDetail: { message: input.message } },
      });
    }
    await recordActivity(tx, {
      companyId: run.companyId,
      actor: SYSTEM_ACTOR,
      action: "run.failed",
      entityType: "run",
      entityId: run.id,
      details: { issueId: run.nativeIssueId, errorCode: input.code, message: input.message },
    });
    await recordRunEvent(tx, {
      companyId: run.companyId,
      runId: run.id,
      level: "error",
      code: "run.failed",
      message: input.message,
      payload: { errorCode: input.code },
    });
    const arbiter = await arbitrateRunFailure(tx, { runId: run.id, code: input.code });
    return { kind: "failed", arbiter };
  }
}

/**
 * Marks a running run succeeded once its coordinator is committed; call it in the transaction
 * that commits. Returns false when the run was no longer running (already settled).
 */
export async function completeRun(tx: TransactionClient, input: { runId: string }): Promise<boolean> {
  const run = await lockRun(tx, input.runId);
  const coordinator = await tx.nativeRunFinalization.findUnique({
    where: { runId: run.id },
    select: { phase: true },
  });
  if (coordinator?.phase !== "committed") {
    throw conflict("finalization_not_committed", "A run succeeds only after its finalization committed.", {
      phase: coordinator?.phase ?? null,
    });
  }
  if (run.status !== "running") return false;
  await tx.heartbeatRun.update({
    where: { id: run.id },
    data: { status: "succeeded", finishedAt: new Date() },
  });
  await recordActivity(tx, {
    companyId: run.companyId,
    actor: SYSTEM_ACTOR,
    action: "run.succeeded",
    entityType: "run",
    entityId: run.id,
    details: { issueId: run.nativeIssueId },
  });
  await recordRunEvent(tx, {
    companyId: run.companyId,
    runId: run.id,
    level: "info",
    code: "run.finished",
    message: "Run succeeded.",
  });
  return true;
}

async function lockRun(tx: TransactionClient, runId: string) {
  await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${runId}::uuid FOR UPDATE`;
  const run = await tx.heartbeatRun.findUnique({
    where: { id: runId },
    select: { id: true, companyId: true, nativeIssueId: true, status: true },
  });
  if (!run) throw notFound("Run");
  return run;
}
