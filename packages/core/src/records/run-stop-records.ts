// The three records of a run-only Stop (R-RC-7), each its own key of heartbeat_runs'
// runner_profile_json (shared with other writers: written with `||`, read with zod, so unknown or
// malformed JSON never grants anything):
//   stopRequest          someone asked to stop the run (the console's Stop, POST /api/runs/:id/stop);
//                        the worker executing the run polls for it (dispatch/stop-watch.ts)
//   stopAcknowledgement  the executor (or the Stop service, for a run no worker had claimed) saw
//                        the request and the agent's process group is stopped; written in the
//                        transaction that ends the run `cancelled`
//   stopRetention        what happened to the workspace prepared before the finish call: pinned
//                        (a stop-only intent on the exact lease) before the environment was
//                        released, or why there was nothing to pin. A cancellation acknowledged
//                        without it is "historical" and the stop-retention sweep finishes it.
import { Prisma } from "@copyback/db/client";
import { z } from "zod";
import { mergedJsonObject } from "./run-json";

export const STOP_REQUEST_KEY = "stopRequest";
export const STOP_ACKNOWLEDGEMENT_KEY = "stopAcknowledgement";
export const STOP_RETENTION_KEY = "stopRetention";

export const STOP_REQUEST_SCHEMA = "copyback.run-stop-request.v1";
export const STOP_ACKNOWLEDGEMENT_SCHEMA = "copyback.run-stop-acknowledgement.v1";
export const STOP_RETENTION_SCHEMA = "copyback.run-stop-retention.v1";

/** The stable error code of a run that a Stop cancelled (heartbeat_runs.error_code). */
export const RUN_STOPPED_CODE = "run_stopped";

const actor = z.object({ type: z.string(), id: z.string().nullable() });

export const stopRequestRecord = z.object({
  schema: z.literal(STOP_REQUEST_SCHEMA),
  requestId: z.uuid(),
  requestedAt: z.string(),
  actor,
});
export type StopRequestRecord = z.infer<typeof stopRequestRecord>;

export const stopAcknowledgementRecord = z.object({
  schema: z.literal(STOP_ACKNOWLEDGEMENT_SCHEMA),
  requestId: z.uuid(),
  acknowledgedAt: z.string(),
  /** "executor": the worker running the agent stopped it; "stop_service": no worker had claimed the run. */
  by: z.enum(["executor", "stop_service"]),
  controller: z.object({ host: z.string(), pid: z.number(), startTime: z.string(), bootId: z.string() }).nullable(),
  /** How the agent's process ended (null: it never started). */
  agent: z.object({ exitCode: z.number().nullable(), signal: z.string().nullable() }).nullable(),
  /** The lease the run held when it was stopped (null: none was acquired). */
  leaseId: z.uuid().nullable(),
});
export type StopAcknowledgementRecord = z.infer<typeof stopAcknowledgementRecord>;

export const STOP_RETENTION_OUTCOMES = [
  /** The active lease got a stop-only intent in the cancelling transaction (or the sweep's). */
  "pinned",
  /** The lease already carried a stop-only intent (stopping) or a confirmed stop receipt (stopped). */
  "retained",
  /** No workspace was prepared: no lease, or none with an allocation. */
  "nothing_to_retain",
  /** The source cannot be retained under the exact-source checks (the reason says why). */
  "refused",
] as const;

export const stopRetentionRecord = z.object({
  schema: z.literal(STOP_RETENTION_SCHEMA),
  requestId: z.uuid(),
  outcome: z.enum(STOP_RETENTION_OUTCOMES),
  reason: z.string(),
  leaseId: z.uuid().nullable(),
  /** The stop-only intent's request id when this record pinned the lease. */
  stopIntentRequestId: z.string().nullable(),
  by: z.enum(["executor", "sweep"]),
  recordedAt: z.string(),
  /** The file-recovery obligation opened for the retained sandbox (null: nothing retained). */
  actionId: z.uuid().nullable().optional(),
});
export type StopRetentionRecord = z.infer<typeof stopRetentionRecord>;

function readKey<T>(json: unknown, key: string, schema: z.ZodType<T>): T | null {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return null;
  const parsed = schema.safeParse((json as Record<string, unknown>)[key]);
  return parsed.success ? parsed.data : null;
}

export const readStopRequest = (runnerProfileJson: unknown) => readKey(runnerProfileJson, STOP_REQUEST_KEY, stopRequestRecord);
export const readStopAcknowledgement = (runnerProfileJson: unknown) => readKey(runnerProfileJson, STOP_ACKNOWLEDGEMENT_KEY, stopAcknowledgementRecord);
export const readStopRetention = (runnerProfileJson: unknown) => readKey(runnerProfileJson, STOP_RETENTION_KEY, stopRetentionRecord);

/** SQL: runner_profile_json with `records` merged in (each a key of this file). */
export function withStopRecords(records: Partial<Record<typeof STOP_REQUEST_KEY | typeof STOP_ACKNOWLEDGEMENT_KEY | typeof STOP_RETENTION_KEY, object>>): Prisma.Sql {
  return mergedJsonObject("runner_profile_json", Prisma.sql`${JSON.stringify(records)}::jsonb`);
}
