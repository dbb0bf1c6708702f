// The contract of "Continue from saved sources" (R-RC-1..R-RC-6) that the REST route, the tRPC
// procedure, the CLI and the web form share with the service (operator/reconstruct-workspace.ts)
// and the later moments (delivery, claim, handoff): the request schemas, the answer views, the
// stable refusal codes and the attachment hash an intent saves. It imports no service, so the
// policy, the snapshot, the intent documents and the offer read it without importing the
// operator service back.
import { z } from "zod";
import { DomainError } from "../../errors";

/** R-RC-2: one observed external action and what the operator saw of it. */
export const externalActionOutcome = z.strictObject({
  action: z.string().trim().min(1).max(2_000),
  outcome: z.enum(["performed", "not_performed", "unknown"]),
  evidence: z.string().trim().max(20_000).optional(),
});
export type ExternalActionOutcome = z.infer<typeof externalActionOutcome>;

/** R-RC-2: the body of the request, shared by the REST route, the tRPC procedure and the CLI. */
export const reconstructWorkspaceBody = z.strictObject({
  actionId: z.uuid(),
  /** The run whose workspace was lost. */
  sourceRunId: z.uuid(),
  /** The exact destroyed lease (R-RC-1). */
  leaseId: z.uuid(),
  attachmentIds: z.array(z.uuid()).max(500),
  description: z.string().trim().min(1).max(20_000),
  externalActionOutcomes: z.array(externalActionOutcome).max(200),
  /** The task status version the operator saw (R-RC-2). */
  sourceStatusVersion: z.number().int().min(0),
  /** Idempotency key: repeated submissions adopt the first intent (R-RC-3). */
  requestId: z.string().trim().min(1).max(200),
});
export type ReconstructWorkspaceBody = z.infer<typeof reconstructWorkspaceBody>;

/** R-RC-3: one selected attachment as the admission hashed its stored bytes. */
export interface AttachmentHash {
  attachmentId: string;
  sha256: string;
  sizeBytes: number;
}

export interface ReconstructionIntentView {
  id: string;
  status: "pending" | "delivered" | "cancelled";
  actionId: string;
  sourceRunId: string;
  leaseId: string;
  requestId: string;
  attachmentHashes: AttachmentHash[];
  deliveredRunId: string | null;
  createdAt: string;
  /**
   * R-RC-3, R-RC-5: why a pending intent's delivery waits (the last transient refusal, recorded
   * when its code changed): the code, core's fixed sentence for it, since when and last seen.
   */
  deferral: { code: string; message: string; since: string; lastSeenAt: string } | null;
}

/** recorded: this call wrote the intent (201); adopted: a repeat, the first intent, nothing written (200). */
export type ReconstructWorkspaceOutcome = { kind: "recorded" | "adopted"; intent: ReconstructionIntentView };

export interface ReconstructionOffer {
  actionId: string;
  sourceRunId: string;
  leaseId: string;
  /** The task's status version now: the operator sends it back as sourceStatusVersion. */
  statusVersion: number;
  destroyedAt: string;
  attachments: { id: string; name: string; sizeBytes: number; sha256: string; createdAt: string }[];
  pendingIntent: ReconstructionIntentView | null;
}

/**
 * The stable refusal codes (DomainError.code) and their kinds; the web shell maps kinds to HTTP
 * (not_found 404, conflict 409, invalid 422) in apps/web/src/server/errors.ts.
 */
export const RECONSTRUCTION_REFUSALS = {
  action_not_found: "not_found",
  run_not_found: "not_found",
  lease_not_found: "not_found",
  action_closed: "conflict",
  action_mismatch: "invalid",
  source_not_destroyed: "conflict",
  result_unbound: "conflict",
  descriptor_mismatch: "conflict",
  task_closed: "conflict",
  task_reassigned: "conflict",
  status_version_changed: "conflict",
  active_copyback_owner: "conflict",
  execution_owner: "conflict",
  competing_recovery: "conflict",
  newer_execution: "conflict",
  later_cancellation_unrepaired: "conflict",
  external_action_uncertain: "conflict",
  foreign_attachment: "invalid",
  attachment_unavailable: "conflict",
  attachment_changed: "conflict",
  request_reused: "conflict",
  // Later moments (delivery, claim, provider handoff; R-RC-5, R-RC-6):
  sources_changed: "conflict",
  human_block: "conflict",
  retry_budget_exhausted: "conflict",
  uncertain_predecessor: "conflict",
} as const;
export type ReconstructionRefusalCode = keyof typeof RECONSTRUCTION_REFUSALS;

/** A refusal with its stable code, of the kind RECONSTRUCTION_REFUSALS gives it (404, 409 or 422 at the web shell). */
export function reconstructionRefusal(code: ReconstructionRefusalCode, message: string, input: { actionId: string; sourceRunId: string; leaseId: string }): DomainError {
  return new DomainError(RECONSTRUCTION_REFUSALS[code], code, message, { actionId: input.actionId, runId: input.sourceRunId, leaseId: input.leaseId });
}
