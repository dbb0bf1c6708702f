// Stop: run-only cancellation (R-RC-7), the one service behind the task's Stop button and
// POST /api/runs/:id/stop. It never touches the task's status, owner or conversation: only the run.
//
//   queued   no worker has it: nothing was prepared and no agent runs, so the run ends `cancelled`
//            here, with its acknowledgement (by the Stop service) and retention (nothing_to_retain)
//   running  a durable stop request is recorded on the run; the worker executing it notices
//            (dispatch/stop-watch.ts), stops the agent's process group, pins the prepared
//            workspace and ends the run `cancelled` (runs/cancel-stopped-run.ts). Repeating the
//            request answers the first one.
//   running with an accepted result
//            the agent already finished its turn: the finalizer owns the rest of the run (R-ORP-1,
//            "Stop also preserves a native workspace prepared before the finish call" - after it,
//            the result is the truth). Stop ends what is left of the agent's process, never the
//            copyback: the saved result is copied back and applied as if the agent had exited.
//   finished 409 run_not_active with the status; nothing changes.
//
// Under the run's row lock, so a result published at the same moment (it locks the same row,
// R-ORP-2) is either seen here or arrives after the request is recorded.
import { randomUUID } from "node:crypto";
import { withTransaction, type Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { conflict, invalid, notFound } from "../errors";
import { recordActivity, type Actor } from "../records/record-activity";
import { recordRunEvent } from "../records/run-log";
import {
  readStopRequest,
  RUN_STOPPED_CODE,
  STOP_ACKNOWLEDGEMENT_SCHEMA,
  STOP_REQUEST_SCHEMA,
  STOP_RETENTION_SCHEMA,
  withStopRecords,
  type StopAcknowledgementRecord,
  type StopRequestRecord,
  type StopRetentionRecord,
} from "../records/run-stop-records";

export interface StopRunInput {
  companyId: string;
  runId: string;
  actor: Actor;
}

export type StopRunOutcome =
  /** The run was queued: it is cancelled now, nothing ran. */
  | { kind: "cancelled"; runId: string; requestId: string }
  /** The worker executing the run stops its agent and cancels it; `duplicate` when it was already asked. */
  | { kind: "stop_requested"; runId: string; requestId: string; duplicate: boolean }
  /** The agent already submitted its result: the copyback of that result goes on. */
  | { kind: "finalizing"; runId: string; requestId: string; resultId: string; duplicate: boolean };

const input = z.object({ companyId: z.uuid(), runId: z.uuid() });

export function stopRun(db: PrismaClient, raw: StopRunInput): Promise<StopRunOutcome> {
  const parsed = input.safeParse(raw);
  if (!parsed.success) throw invalid("stop_input_invalid", "A run id and a company id are required.");
  return withTransaction(db, (tx) => stopInTransaction(tx, raw));
}

async function stopInTransaction(tx: TransactionClient, input: StopRunInput): Promise<StopRunOutcome> {
  await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${input.runId}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`;
  const run = await tx.heartbeatRun.findFirst({
    where: { id: input.runId, companyId: input.companyId },
    select: { id: true, companyId: true, nativeIssueId: true, status: true, runnerProfileJson: true },
  });
  if (!run) throw notFound("The run");
  if (run.status !== "queued" && run.status !== "running") {
    throw conflict("run_not_active", `The run already ended (${run.status}); there is nothing to stop.`, { runId: run.id, status: run.status });
  }
  const existing = readStopRequest(run.runnerProfileJson);
  const request: StopRequestRecord = existing ?? {
    schema: STOP_REQUEST_SCHEMA,
    requestId: randomUUID(),
    requestedAt: new Date().toISOString(),
    actor: { type: input.actor.type, id: input.actor.id },
  };

  if (run.status === "queued") return cancelQueued(tx, run, request, input.actor);

  const accepted = await tx.nativeRunResult.findFirst({
    where: { runId: run.id, schemaStatus: "accepted" },
    orderBy: { createdAt: "asc" },
    select: { id: true },
  });
  if (!existing) {
    await tx.$executeRaw`
      UPDATE heartbeat_runs SET runner_profile_json = ${withStopRecords({ stopRequest: request })}, updated_at = now()
      WHERE id = ${run.id}::uuid`;
    await recordActivity(tx, {
      companyId: run.companyId,
      actor: input.actor,
      action: "run.stop_requested",
      entityType: "run",
      entityId: run.id,
      details: { issueId: run.nativeIssueId, requestId: request.requestId, resultAccepted: accepted !== null },
    });
    await recordRunEvent(tx, {
      companyId: run.companyId,
      runId: run.id,
      level: "warn",
      code: "run.stop_requested",
      message: accepted
        ? "Stop was requested after the agent submitted its result: the agent's process is ended and the saved result is still copied back."
        : "Stop was requested: the worker stops the agent, keeps its sandbox and cancels the run.",
      payload: { requestId: request.requestId, resultId: accepted?.id ?? null },
    });
  }
  if (accepted) return { kind: "finalizing", runId: run.id, requestId: request.requestId, resultId: accepted.id, duplicate: existing !== null };
  return { kind: "stop_requested", runId: run.id, requestId: request.requestId, duplicate: existing !== null };
}

async function cancelQueued(
  tx: TransactionClient,
  run: { id: string; companyId: string; nativeIssueId: string },
  request: StopRequestRecord,
  actor: Actor,
): Promise<StopRunOutcome> {
  const now = new Date().toISOString();
  const acknowledgement: StopAcknowledgementRecord = {
    schema: STOP_ACKNOWLEDGEMENT_SCHEMA,
    requestId: request.requestId,
    acknowledgedAt: now,
    by: "stop_service",
    controller: null,
    agent: null,
    leaseId: null,
  };
  const retention: StopRetentionRecord = {
    schema: STOP_RETENTION_SCHEMA,
    requestId: request.requestId,
    outcome: "nothing_to_retain",
    reason: "The run was stopped before a worker claimed it: no workspace was prepared.",
    leaseId: null,
    stopIntentRequestId: null,
    by: "executor",
    recordedAt: now,
  };
  const message = "Stopped before a worker started it.";
  await tx.$executeRaw`
    UPDATE heartbeat_runs
    SET status = 'cancelled', error_code = ${RUN_STOPPED_CODE}, error_message = ${message}, finished_at = now(), updated_at = now(),
        runner_profile_json = ${withStopRecords({ stopRequest: request, stopAcknowledgement: acknowledgement, stopRetention: retention })}
    WHERE id = ${run.id}::uuid AND status = 'queued'`;
  await recordActivity(tx, {
    companyId: run.companyId,
    actor,
    action: "run.cancelled",
    entityType: "run",
    entityId: run.id,
    details: { issueId: run.nativeIssueId, requestId: request.requestId, errorCode: RUN_STOPPED_CODE } satisfies Prisma.InputJsonObject,
  });
  await recordRunEvent(tx, { companyId: run.companyId, runId: run.id, level: "warn", code: "run.cancelled", message, payload: { errorCode: RUN_STOPPED_CODE, requestId: request.requestId } });
  return { kind: "cancelled", runId: run.id, requestId: request.requestId };
}
