// R-RW-5: the harness endpoint's wire format, shared by the harness and the tenant's client.
// `POST /v1/tenant/workspace-worker-stop` with `Authorization: Bearer <fleet token>`: the token
// authorizes the read request only; the answer is evidence only through the receipt's signature.
import { z } from "zod";
import { controllerPlatformIdentity } from "./platform-identity";

export const WORKER_STOP_PATH = "/v1/tenant/workspace-worker-stop";
/** Far above a real request (~400 bytes): the harness refuses a bigger body unread. */
export const WORKER_STOP_MAX_REQUEST_BYTES = 8192;

export const workerStopRequest = z.strictObject({
  stack: z.string().min(1).max(128),
  runId: z.string().min(1).max(128),
  ownerToken: z.string().min(16).max(256),
  /** The identity from the receipt; the harness checks it against what Railway says, never trusts it. */
  deployment: controllerPlatformIdentity,
});
export type WorkerStopRequest = z.infer<typeof workerStopRequest>;

/**
 * Why the harness answered without a receipt (fixed codes; R-RW-2: missing, truncated, live or
 * unavailable evidence keeps the fence).
 */
export const HARNESS_REFUSAL_CODES = [
  "unauthorized",
  "invalid_request",
  "unknown_stack",
  "deployment_not_owned",
  "deployment_missing",
  "deployment_live",
  "evidence_truncated",
  "evidence_unavailable",
] as const;
export type HarnessRefusalCode = (typeof HARNESS_REFUSAL_CODES)[number];

export const workerStopResponse = z.discriminatedUnion("outcome", [
  z.strictObject({ outcome: z.literal("stopped"), receipt: z.string().min(1) }),
  z.strictObject({
    outcome: z.literal("refused"),
    code: z.enum(HARNESS_REFUSAL_CODES),
    message: z.string(),
    /** What Railway reported, when it answered (e.g. SUCCESS, REMOVING). */
    status: z.string().optional(),
  }),
]);
export type WorkerStopResponse = z.infer<typeof workerStopResponse>;
