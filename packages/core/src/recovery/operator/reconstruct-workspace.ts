// "Continue from saved sources" (NWF "Continue after confirmed source destruction", R-RC-1..R-RC-6):
// the one service behind
//   POST /api/issues/:id/recovery-actions/reconstruct-workspace (REST),
//   recovery.reconstructWorkspace (tRPC) and `copyback recovery reconstruct` (CLI),
// and the read behind the notice's offer (recovery.reconstructionOffer).
//
// This is reconstruction, not recovery of the lost edits: the exact sandbox is gone (a confirmed
// destruction receipt, R-RC-1), so the task continues in a FRESH session of its agent from the
// surviving attachments, a description of the missing work and the observed outcomes of external
// actions. The caller has checked `runtime:manage` (R-UI-3). In order, ONE transaction:
//   1. the run's finalization advisory lock (as the finalizer and the export retry take it: an
//      active copyback owner makes it busy), then row locks action -> run -> issue -> lease;
//   2. the snapshot (reconstruction/load-snapshot.ts) and decideReconstruction (pure);
//   3. admitted: the attachment hashes (sha256 of the stored bytes) and the durable fresh-session
//      delivery intent (reconstruction_intents, status pending) with its activity row. The old
//      run, its result, its descriptor and its failed finalization are not touched (R-RC-3).
// A repeated submission (the same requestId, or the same action) adopts the first intent and
// writes nothing (R-RC-3); a refusal writes nothing (the transaction rolls back).
// The delivery of a pending intent as a new run is runs/deliver-reconstruction.ts (R-RC-5).
import { withTransaction, type Prisma, type PrismaClient } from "@copyback/db/client";
import { z } from "zod";
import { DomainError, isUniqueViolation } from "../../errors";
import { recordActivity, type Actor } from "../../records/record-activity";
import { decideReconstruction, type AttachmentHash } from "../policies/decide-reconstruction";
import { hashStoredAttachments, type StoredBytes } from "../reconstruction/attachment-bytes";
import { outcomesDocument } from "../reconstruction/intent-document";
import { intentView } from "../reconstruction/intent-view";
import { loadReconstructionSnapshot } from "../reconstruction/load-snapshot";
import { NO_DEFERRAL } from "../reconstruction-state";

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

export interface ReconstructWorkspaceInput extends ReconstructWorkspaceBody {
  companyId: string;
  issueId: string;
  actor: Actor;
}

export interface ReconstructWorkspaceDeps {
  db: PrismaClient;
  /**
   * The instance root the attachment store keeps its bytes under (issue_attachments.storage_path
   * is relative to it). The admission hashes the stored bytes and compares them with the
   * recorded sha256; a missing or changed file is refused (the agent must be able to verify it).
   */
  instanceRoot: string;
}

export type { AttachmentHash } from "../policies/decide-reconstruction";

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

export { reconstructionOffer } from "../reconstruction/offer";

export async function reconstructWorkspace(deps: ReconstructWorkspaceDeps, rawInput: ReconstructWorkspaceInput): Promise<ReconstructWorkspaceOutcome> {
  const body = reconstructWorkspaceBody.safeParse(bodyOf(rawInput));
  if (!body.success) throw new DomainError("invalid", "invalid_request", `The reconstruction request is invalid: ${z.prettifyError(body.error)}`);
  const input = { ...rawInput, ...body.data };
  const { db } = deps;
  // R-RC-3: the stored bytes are hashed before any lock, and only this task's attachments are
  // read (another task's or company's id is refused by the policy as foreign, unread).
  const rows = input.attachmentIds.length
    ? await db.issueAttachment.findMany({ where: { id: { in: input.attachmentIds }, companyId: input.companyId, issueId: input.issueId }, select: { id: true, storagePath: true } })
    : [];
  const stored = await hashStoredAttachments(deps.instanceRoot, rows);
  try {
    return await recordOnce(db, input, stored);
  } catch (error) {
    // Two first submissions at once: the loser's insert hits the unique recovery_action_id and
    // rolls back; asked again it adopts the winner's intent (R-RC-3).
    if (isUniqueViolation(error)) return recordOnce(db, input, stored);
    throw error;
  }
}

function recordOnce(db: PrismaClient, input: ReconstructWorkspaceInput, stored: Map<string, StoredBytes | null>): Promise<ReconstructWorkspaceOutcome> {
  return withTransaction(db, async (tx) => {
    const snapshot = await loadReconstructionSnapshot(tx, { stage: "record", request: input, intent: null, stored });
    const decision = decideReconstruction(snapshot);
    if (decision.kind === "reject") throw reconstructionRefusal(decision.code, decision.message, input);
    if (decision.kind === "adopt") {
      // R-RC-3: the first intent, unchanged; nothing is written.
      const intent = await tx.reconstructionIntent.findUniqueOrThrow({ where: { id: decision.intentId } });
      return { kind: "adopted" as const, intent: intentView(intent) };
    }
    // R-RC-3: the hashes and the durable fresh-session delivery intent; the old run, its result,
    // its descriptor and its failed finalization are not written.
    // A cancelled intent of this action (its delivery found the decision stale) is replaced by this
    // fresh decision in place: one intent per action (reconstruction_intents.recovery_action_id).
    const replaced = snapshot.existing.byAction?.status === "cancelled" ? snapshot.existing.byAction.id : null;
    const data: Prisma.ReconstructionIntentUncheckedCreateInput = {
      companyId: input.companyId,
      issueId: input.issueId,
      sourceRunId: input.sourceRunId,
      recoveryActionId: input.actionId,
      leaseId: input.leaseId,
      status: "pending",
      attachmentHashes: decision.attachmentHashes.map((h) => ({ ...h })),
      description: input.description,
      // R-RC-6: the identities and hashes of the decisions admitted, beside the observed outcomes.
      externalActionOutcomes: outcomesDocument(input.externalActionOutcomes, decision.saved) as unknown as Prisma.InputJsonObject,
      sourceStatusVersion: input.sourceStatusVersion,
      requestId: input.requestId,
      createdByUserId: input.actor.type === "user" ? input.actor.id : null,
    };
    const intent = replaced
      ? await tx.reconstructionIntent.update({ where: { id: replaced }, data: { ...data, status: "pending", deliveredRunId: null, ...NO_DEFERRAL, createdAt: new Date() } })
      : await tx.reconstructionIntent.create({ data });
    await recordActivity(tx, {
      companyId: input.companyId,
      actor: input.actor,
      action: "recovery.reconstruction_recorded",
      entityType: "issue_recovery_action",
      entityId: input.actionId,
      details: {
        issueId: input.issueId,
        runId: input.sourceRunId,
        leaseId: input.leaseId,
        intentId: intent.id,
        requestId: input.requestId,
        attachmentIds: decision.attachmentHashes.map((h) => h.attachmentId),
        externalActionOutcomes: input.externalActionOutcomes.map((o) => o.outcome),
        ...(replaced ? { replacedCancelledIntent: true } : {}),
      },
    });
    return { kind: "recorded" as const, intent: intentView(intent) };
  });
}

/** A refusal with its stable code, of the kind RECONSTRUCTION_REFUSALS gives it (404, 409 or 422 at the web shell). */
export function reconstructionRefusal(code: ReconstructionRefusalCode, message: string, input: { actionId: string; sourceRunId: string; leaseId: string }): DomainError {
  return new DomainError(RECONSTRUCTION_REFUSALS[code], code, message, { actionId: input.actionId, runId: input.sourceRunId, leaseId: input.leaseId });
}

function bodyOf(input: ReconstructWorkspaceInput): ReconstructWorkspaceBody {
  const { actionId, sourceRunId, leaseId, attachmentIds, description, externalActionOutcomes, sourceStatusVersion, requestId } = input;
  return { actionId, sourceRunId, leaseId, attachmentIds, description, externalActionOutcomes, sourceStatusVersion, requestId };
}
