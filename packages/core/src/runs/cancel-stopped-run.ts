// The executor's side of Stop (R-RC-7): the agent's process group is already stopped; now, in one
// transaction under the run's and the task's row locks, the workspace prepared before the finish
// call is pinned (a stop-only intent on the exact lease), the run ends `cancelled` with its
// acknowledgement and retention records, and its coordinator ends as terminal_failure (run_stopped:
// nothing of this run is ever finalized or replayed). Only after that commit does the executor
// release the environment (the ordinary stop-and-retain continues the pinned intent).
//
// Run-only: the task keeps its status, owner and conversation; only the run's checkout ends.
//
// R-FO-6: the executor decided to cancel from an unlocked read; a finish that committed since
// (it locks the same run row, R-ORP-2) is seen here under the run's row lock, and then nothing is
// cancelled: the answer is `result_accepted`, and the executor finalizes the saved result, as Stop
// promises once the agent submitted ("the saved result is copied back and applied").
//
// The task lock: the task's row lock is tried (SKIP LOCKED, a few times over `taskLockWaitMs`)
// after the run's (lock order heartbeat -> issue, as everywhere). If it cannot be had, the run is
// still cancelled with its acknowledgement, but without retention and without touching the task
// or the lease: the source stays active, and the stop-retention sweep pins it on a later pass.
import { setTimeout as sleep } from "node:timers/promises";
import { Prisma, withTransaction, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { canTransition, type FinalizationPhase } from "../records/coordinator-phases";
import { mergedJsonObject } from "../records/run-json";
import type { ProcessIdentity } from "../process/process-identity";
import { recordActivity, SYSTEM_ACTOR } from "../records/record-activity";
import { recordRunEvent } from "../records/run-log";
import {
  RUN_STOPPED_CODE,
  STOP_ACKNOWLEDGEMENT_SCHEMA,
  withStopRecords,
  type StopAcknowledgementRecord,
  type StopRequestRecord,
  type StopRetentionRecord,
} from "../records/run-stop-records";
import { retainStoppedSource } from "./stop-retention";

export interface CancelStoppedRunInput {
  runId: string;
  request: StopRequestRecord;
  controller: ProcessIdentity | null;
  /** How the agent's process ended (null: it never started). */
  agent: { exitCode: number | null; signal: string | null } | null;
  /** The lease this executor acquired for the run (null: none). */
  leaseId: string | null;
  /** How long the task's row lock is tried before retention is left to the sweep (default 2 s). */
  taskLockWaitMs?: number;
}

export type CancelStoppedRunOutcome =
  | { kind: "cancelled"; retention: StopRetentionRecord }
  /** Cancelled and acknowledged, but the task lock was not had: the source stays active for the sweep. */
  | { kind: "cancelled_retention_deferred" }
  /** R-FO-6: the run has an accepted result after all: nothing was cancelled; finalize it. */
  | { kind: "result_accepted"; resultId: string }
  | { kind: "not_running"; status: string };

export const STOPPED_MESSAGE = "Stopped from the console or the API before the agent submitted a result; its sandbox is kept.";

const UNFINISHED: FinalizationPhase[] = ["observed", "result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"];
const LOCK_TRY_INTERVAL_MS = 100;

export async function cancelStoppedRun(db: PrismaClient, input: CancelStoppedRunInput): Promise<CancelStoppedRunOutcome> {
  const deadline = Date.now() + (input.taskLockWaitMs ?? 2_000);
  for (;;) {
    const outcome = await withTransaction(db, (tx) => cancelWithRetention(tx, input));
    if (outcome !== "task_locked") return outcome;
    if (Date.now() >= deadline) break;
    await sleep(LOCK_TRY_INTERVAL_MS);
  }
  return withTransaction(db, (tx) => cancelWithoutRetention(tx, input));
}

function acknowledgementOf(input: CancelStoppedRunInput): StopAcknowledgementRecord {
  const c = input.controller;
  return {
    schema: STOP_ACKNOWLEDGEMENT_SCHEMA,
    requestId: input.request.requestId,
    acknowledgedAt: new Date().toISOString(),
    by: "executor",
    controller: c ? { host: c.host, pid: c.pid, startTime: c.startTime, bootId: c.bootId } : null,
    agent: input.agent,
    leaseId: input.leaseId,
  };
}

async function lockRunningRun(tx: TransactionClient, runId: string) {
  await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${runId}::uuid FOR UPDATE`;
  return tx.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { id: true, companyId: true, nativeIssueId: true, status: true } });
}

/**
 * Under the run's row lock: a run that ended, or one whose accepted result was published after the
 * executor's unlocked read (R-FO-6: never cancelled away; the run log says why it goes on), or
 * null when the run is to be cancelled.
 */
async function notToCancel(
  tx: TransactionClient,
  run: { id: string; companyId: string; status: string },
  input: CancelStoppedRunInput,
): Promise<CancelStoppedRunOutcome | null> {
  if (run.status !== "running") return { kind: "not_running", status: run.status };
  const accepted = await tx.nativeRunResult.findFirst({ where: { runId: run.id, schemaStatus: "accepted" }, orderBy: { createdAt: "asc" }, select: { id: true } });
  if (!accepted) return null;
  await recordRunEvent(tx, {
    companyId: run.companyId,
    runId: run.id,
    level: "info",
    code: "run.stop_after_result",
    message: "Stop reached the run as the agent's result was accepted: the agent's process is ended, and the saved result is copied back and applied.",
    payload: { requestId: input.request.requestId, resultId: accepted.id },
  });
  return { kind: "result_accepted", resultId: accepted.id };
}

async function cancelWithRetention(tx: TransactionClient, input: CancelStoppedRunInput): Promise<CancelStoppedRunOutcome | "task_locked"> {
  const run = await lockRunningRun(tx, input.runId);
  const settled = await notToCancel(tx, run, input);
  if (settled) return settled;
  // The task lock: skipped (not waited for) while someone else holds it.
  const task = await tx.$queryRaw<{ id: string; checkout_run_id: string | null }[]>`
    SELECT id, checkout_run_id FROM issues WHERE id = ${run.nativeIssueId}::uuid FOR UPDATE SKIP LOCKED`;
  if (task.length !== 1) return "task_locked";

  // R-RC-7: the pin commits with the cancellation, before the environment is released.
  const retention = await retainStoppedSource(tx, { runId: run.id, requestId: input.request.requestId, leaseId: input.leaseId, by: "executor" });
  await endRun(tx, run, input, { stopAcknowledgement: acknowledgementOf(input), stopRetention: retention });
  const now = new Date();
  await tx.issue.update({
    where: { id: run.nativeIssueId },
    data: { lastActivityAt: now, ...(task[0]?.checkout_run_id === run.id ? { checkoutRunId: null } : {}) },
  });
  await recordRunEvent(tx, {
    companyId: run.companyId,
    runId: run.id,
    level: retention.outcome === "refused" ? "warn" : "info",
    code: "run.stop_retention",
    message:
      retention.outcome === "pinned"
        ? "The sandbox the agent worked in is pinned (stop only, files kept) before it is released."
        : `Retention of the stopped run's sandbox: ${retention.outcome} (${retention.reason}).`,
    payload: { ...retention },
  });
  return { kind: "cancelled", retention };
}

async function cancelWithoutRetention(tx: TransactionClient, input: CancelStoppedRunInput): Promise<CancelStoppedRunOutcome> {
  const run = await lockRunningRun(tx, input.runId);
  const settled = await notToCancel(tx, run, input);
  if (settled) return settled;
  await endRun(tx, run, input, { stopAcknowledgement: acknowledgementOf(input) });
  await recordRunEvent(tx, {
    companyId: run.companyId,
    runId: run.id,
    level: "warn",
    code: "run.stop_retention_deferred",
    message: "The task was locked by someone else: the sandbox stays active as it is, and recovery pins it on a later pass.",
    payload: { leaseId: input.leaseId },
  });
  return { kind: "cancelled_retention_deferred" };
}

async function endRun(
  tx: TransactionClient,
  run: { id: string; companyId: string; nativeIssueId: string },
  input: CancelStoppedRunInput,
  records: { stopAcknowledgement: StopAcknowledgementRecord; stopRetention?: StopRetentionRecord },
): Promise<void> {
  // The coordinator first, then ONE update of the run row carrying the phase mirror too: a second
  // update of a row this transaction already updated re-runs its foreign-key checks, whose KEY
  // SHARE lock on the task would wait for the very task lock the deferred path could not get.
  if (UNFINISHED.some((from) => !canTransition(from, "terminal_failure"))) throw new Error("cancelStoppedRun: the coordinator's phases changed");
  const moved = await tx.nativeRunFinalization.updateMany({
    where: { runId: run.id, phase: { in: UNFINISHED } },
    data: { phase: "terminal_failure", failureCode: RUN_STOPPED_CODE, failureDetail: { message: STOPPED_MESSAGE }, nextAttemptAt: null },
  });
  const phase = moved.count === 1 ? Prisma.sql`'terminal_failure'` : Prisma.sql`native_phase`;
  const resultJson = moved.count === 1 ? mergedJsonObject("result_json", Prisma.sql`jsonb_build_object('finalizationPhase', 'terminal_failure')`) : Prisma.sql`result_json`;
  await tx.$executeRaw`
    UPDATE heartbeat_runs
    SET status = 'cancelled', error_code = ${RUN_STOPPED_CODE}, error_message = ${STOPPED_MESSAGE}, finished_at = now(), updated_at = now(),
        native_phase = ${phase}, result_json = ${resultJson},
        runner_profile_json = ${withStopRecords(records)}
    WHERE id = ${run.id}::uuid`;
  await recordActivity(tx, {
    companyId: run.companyId,
    actor: SYSTEM_ACTOR,
    action: "run.cancelled",
    entityType: "run",
    entityId: run.id,
    details: { issueId: run.nativeIssueId, requestId: input.request.requestId, errorCode: RUN_STOPPED_CODE, requestedBy: input.request.actor },
  });
  await recordRunEvent(tx, {
    companyId: run.companyId,
    runId: run.id,
    level: "warn",
    code: "run.cancelled",
    message: STOPPED_MESSAGE,
    payload: { errorCode: RUN_STOPPED_CODE, requestId: input.request.requestId, agent: input.agent },
  });
}
