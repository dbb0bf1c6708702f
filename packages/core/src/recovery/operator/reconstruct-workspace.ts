// "Continue from saved sources" (NWF "Continue after confirmed source destruction", R-RC-1..R-RC-6):
// the one service behind
//   POST /api/issues/:id/recovery-actions/reconstruct-workspace (REST),
//   recovery.reconstructWorkspace (tRPC) and `copyback recovery reconstruct` (CLI).
// Its request schema, answer views and refusal codes are reconstruction/contract.ts; the read
// behind the notice's offer (recovery.reconstructionOffer) is reconstruction/offer.ts.
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
// The delivery of a pending intent as a new run is reconstruction/deliver-intent.ts (R-RC-5).
import { withTransaction, type Prisma, type PrismaClient } from "@copyback/db/client";
import { z } from "zod";
import { DomainError, isUniqueViolation } from "../../errors";
import { recordActivity, type Actor } from "../../records/record-activity";
import { decideReconstruction } from "../reconstruction/decide-reconstruction";
import { hashStoredAttachments, type StoredBytes } from "../reconstruction/attachment-bytes";
import { reconstructionRefusal, reconstructWorkspaceBody, type ReconstructWorkspaceBody, type ReconstructWorkspaceOutcome } from "../reconstruction/contract";
import { outcomesDocument } from "../reconstruction/intent-document";
import { intentView } from "../reconstruction/intent-view";
import { loadReconstructionSnapshot } from "../reconstruction/load-snapshot";
import { NO_DEFERRAL } from "../reconstruction-state";

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

function bodyOf(input: ReconstructWorkspaceInput): ReconstructWorkspaceBody {
  const { actionId, sourceRunId, leaseId, attachmentIds, description, externalActionOutcomes, sourceStatusVersion, requestId } = input;
  return { actionId, sourceRunId, leaseId, attachmentIds, description, externalActionOutcomes, sourceStatusVersion, requestId };
}
