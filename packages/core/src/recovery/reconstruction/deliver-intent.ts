// R-RC-5: delivery of a pending reconstruction intent as a FRESH session: a new queued run of the
// task's agent, created in the one transaction that also marks the intent delivered (its
// delivered_run_id) and resolves the hold it answers (outcome `reconstructed`). Normal admission
// first: decideReconstruction at its "deliver" moment rechecks the source identity, the
// attachments (their stored bytes hashed again, unchanged), the authority (the same agent), the
// holds and the task's eligibility against what the operator's decision saved. A transient
// refusal (another hold or run still settling, a copyback owner) leaves the intent pending for a
// later pass and records only why it waits (its deferral, R-RC-3: written when the code changes,
// so a pass that sees the same code writes nothing); any other (a changed source, receipt or
// hash, another later run, a human block) cancels the intent, and the operator's fresh decision
// replaces it.
//
// Not a replay: the new run has no predecessor, the old run, its result, its descriptor and its
// failed finalization are not touched, no completed action is repeated, and the source action's
// attempts and the source coordinator's attempt keep their counts (no new budget, no new work
// window: the run is an ordinary queued run that claim and handoff recheck again).
import { withTransaction, type PrismaClient, type ReconstructionIntent, type TransactionClient } from "@copyback/db/client";
import { isDomainError } from "../../errors";
import { recordRecoveryResolution } from "../../records/actions";
import { decideReconstruction, RECONSTRUCTION_WAKE_REASON, TRANSIENT_DELIVERY_REFUSALS } from "./decide-reconstruction";
import { recordActivity, SYSTEM_ACTOR } from "../../records/record-activity";
import { recordRunEvent, type DbOrTx } from "../../records/run-log";
import { wakeInTransaction } from "../../runs/wake-agent";
import { hashStoredAttachments, type StoredBytes } from "./attachment-bytes";
import { reconstructionContext, reconstructionEventPayload } from "./authority";
import { reconstructionAuthority } from "../../records/reconstruction-authority";
import { readAttachmentHashes } from "./intent-document";
import { loadReconstructionSnapshot, RECONSTRUCTION_RESOLUTION_SCHEMA } from "./load-snapshot";
import { NO_DEFERRAL, RECONSTRUCTION_CANCELLED_ACTIVITY } from "../reconstruction-state";
import { deferralMessage } from "../task-notice";

export const RECONSTRUCTED_OUTCOME = "reconstructed";

export type DeliveryOutcome =
  | { kind: "delivered"; intentId: string; runId: string }
  | { kind: "refused"; intentId: string; code: string; message: string }
  | { kind: "not_pending"; intentId: string };

export interface DeliveryDeps {
  db: PrismaClient;
  /** Where the attachment store keeps its bytes (issue_attachments.storage_path is relative to it). */
  instanceRoot: string;
  /** The clock of the deferral's times (tests pass one). */
  now?: () => Date;
}

/**
 * R-RC-3: how often an unchanged deferral's last-seen time is refreshed. The sweep passes every
 * 5 s; a write per pass would be noise (and a live notification to every open page each time),
 * so the same code is written again only this rarely, to show the wait is still current.
 */
export const DEFERRAL_SEEN_REFRESH_MS = 10 * 60_000;

/**
 * R-RC-3, R-RC-5: record that `intent`'s delivery waits on `code` (a refusal that leaves it
 * pending). Writes only when the code differs from the recorded one (first deferral or another
 * code: `since` restarts), or to refresh the last-seen time after DEFERRAL_SEEN_REFRESH_MS; the
 * row is matched by its status and decision time so a fresh decision is never given an old
 * deferral. The message is core's fixed sentence for the code, never the refusal's own text.
 */
export async function recordDeferral(
  db: DbOrTx,
  intent: Pick<ReconstructionIntent, "id" | "createdAt" | "deferralCode" | "deferralSeenAt">,
  code: string,
  now: Date,
): Promise<"recorded" | "refreshed" | "unchanged"> {
  const row = { id: intent.id, status: "pending" as const, createdAt: intent.createdAt };
  if (intent.deferralCode === code) {
    if (intent.deferralSeenAt !== null && now.getTime() - intent.deferralSeenAt.getTime() < DEFERRAL_SEEN_REFRESH_MS) return "unchanged";
    const refreshed = await db.reconstructionIntent.updateMany({ where: { ...row, deferralCode: code }, data: { deferralSeenAt: now } });
    return refreshed.count === 1 ? "refreshed" : "unchanged";
  }
  const recorded = await db.reconstructionIntent.updateMany({
    where: row,
    data: { deferralCode: code, deferralMessage: deferralMessage(code), deferredSince: now, deferralSeenAt: now },
  });
  return recorded.count === 1 ? "recorded" : "unchanged";
}

/** The stored bytes of an intent's saved attachments (only its own task's rows are read). */
export async function storedBytesOfIntent(db: DbOrTx, root: string, intent: ReconstructionIntent): Promise<Map<string, StoredBytes | null>> {
  const ids = (readAttachmentHashes(intent.attachmentHashes) ?? []).map((h) => h.attachmentId);
  const rows = ids.length ? await db.issueAttachment.findMany({ where: { id: { in: ids }, companyId: intent.companyId, issueId: intent.issueId }, select: { id: true, storagePath: true } }) : [];
  return hashStoredAttachments(root, rows);
}

export function requestOfIntent(intent: ReconstructionIntent) {
  return {
    companyId: intent.companyId,
    issueId: intent.issueId,
    actionId: intent.recoveryActionId,
    sourceRunId: intent.sourceRunId,
    leaseId: intent.leaseId,
    attachmentIds: (readAttachmentHashes(intent.attachmentHashes) ?? []).map((h) => h.attachmentId),
    sourceStatusVersion: intent.sourceStatusVersion,
    requestId: intent.requestId,
  };
}

export async function deliverReconstruction(deps: DeliveryDeps, intentId: string): Promise<DeliveryOutcome> {
  const { db } = deps;
  const first = await db.reconstructionIntent.findUnique({ where: { id: intentId } });
  if (!first || first.status !== "pending") return { kind: "not_pending", intentId };
  // Hashed before the transaction: file I/O never runs under row locks.
  const stored = await storedBytesOfIntent(db, deps.instanceRoot, first);
  const now = deps.now ?? (() => new Date());
  return withTransaction(db, (tx) => deliverInTransaction(tx, intentId, first.createdAt, stored, now)).catch(async (error: unknown) => {
    // The wake's own refusals (an open hold the snapshot did not count, a run that appeared, an
    // archived agent, ...): rolled back, the intent stays pending, and why it waits is recorded
    // after the rollback (matched by the decision time, so a fresh decision is left alone).
    if (!isDomainError(error)) throw error;
    await recordDeferral(db, first, error.code, now());
    return { kind: "refused" as const, intentId, code: error.code, message: error.message };
  });
}

async function deliverInTransaction(tx: TransactionClient, intentId: string, hashedFor: Date, stored: Map<string, StoredBytes | null>, now: () => Date): Promise<DeliveryOutcome> {
  await tx.$queryRaw`SELECT id FROM reconstruction_intents WHERE id = ${intentId}::uuid FOR UPDATE`;
  const intent = await tx.reconstructionIntent.findUnique({ where: { id: intentId } });
  // Replaced by a fresh decision since its bytes were hashed: the next pass hashes the new selection.
  if (!intent || intent.status !== "pending" || intent.createdAt.getTime() !== hashedFor.getTime()) return { kind: "not_pending" as const, intentId };
  const snapshot = await loadReconstructionSnapshot(tx, { stage: "deliver", request: requestOfIntent(intent), intent, stored });
  const decision = decideReconstruction(snapshot);
  if (decision.kind !== "admit") {
    const code = decision.kind === "reject" ? decision.code : "sources_changed";
    const message = decision.kind === "reject" ? decision.message : "The intent was adopted elsewhere.";
    // The decision no longer holds: cancelled, so the operator can decide afresh (the offer shows
    // the form again); a transient refusal leaves it pending for a later pass, saying why it waits.
    if (TRANSIENT_DELIVERY_REFUSALS.includes(code)) await recordDeferral(tx, intent, code, now());
    else await cancelIntent(tx, intent, code, message);
    return { kind: "refused" as const, intentId, code, message };
  }
  // The hold this intent answers is resolved first: a wake refuses while it is open (R-RR-7).
  const won = await recordRecoveryResolution(tx, {
    actionId: intent.recoveryActionId,
    outcome: RECONSTRUCTED_OUTCOME,
    status: "resolved",
    actor: SYSTEM_ACTOR,
    note: "Continued from saved sources: a fresh session of the task's agent rebuilds the missing work.",
    resolutionEvidence: { schema: RECONSTRUCTION_RESOLUTION_SCHEMA, intentId: intent.id, requestId: intent.requestId, sourceRunId: intent.sourceRunId, leaseId: intent.leaseId },
  });
  if (!won) return { kind: "refused" as const, intentId, code: "action_closed", message: "The recovery action was resolved meanwhile." };
  const attachments = await tx.issueAttachment.findMany({
    where: { id: { in: decision.attachmentHashes.map((h) => h.attachmentId) }, companyId: intent.companyId, issueId: intent.issueId },
    select: { id: true, fileName: true, contentType: true },
  });
  const context = reconstructionContext(intent, new Map(attachments.map((a) => [a.id, { name: a.fileName, contentType: a.contentType }])));
  const woken = await wakeInTransaction(tx, {
    companyId: intent.companyId,
    issueId: intent.issueId,
    actor: SYSTEM_ACTOR,
    reason: RECONSTRUCTION_WAKE_REASON,
    runnerProfile: reconstructionAuthority(intent.id),
  });
  // The snapshot saw no other queued or running run; one appearing here would be a bug (rolled back).
  if (!woken.created) throw new Error(`reconstruction delivery: the task already has run ${woken.runId}`);
  const delivered = await tx.reconstructionIntent.updateMany({ where: { id: intent.id, status: "pending" }, data: { status: "delivered", deliveredRunId: woken.runId, ...NO_DEFERRAL } });
  if (delivered.count !== 1) throw new Error("reconstruction delivery: the locked intent changed");
  await recordActivity(tx, {
    companyId: intent.companyId,
    actor: SYSTEM_ACTOR,
    action: "recovery.reconstruction_delivered",
    entityType: "issue_recovery_action",
    entityId: intent.recoveryActionId,
    details: { issueId: intent.issueId, intentId: intent.id, runId: woken.runId, sourceRunId: intent.sourceRunId, attachmentIds: decision.attachmentHashes.map((h) => h.attachmentId) },
  });
  await recordRunEvent(tx, {
    companyId: intent.companyId,
    runId: woken.runId,
    level: "info",
    code: "reconstruction.delivered",
    message: "A fresh session continues this task from saved sources; the agent verifies the selected attachments before rebuilding files. Nothing of the earlier run is replayed.",
    payload: reconstructionEventPayload(context),
  });
  return { kind: "delivered" as const, intentId, runId: woken.runId };
}

/** R-RC-5: the intent's decision no longer holds; recorded with its reason (nothing else changes). */
async function cancelIntent(tx: TransactionClient, intent: ReconstructionIntent, code: string, message: string): Promise<void> {
  const cancelled = await tx.reconstructionIntent.updateMany({ where: { id: intent.id, status: "pending" }, data: { status: "cancelled", ...NO_DEFERRAL } });
  if (cancelled.count !== 1) return;
  await recordActivity(tx, {
    companyId: intent.companyId,
    actor: SYSTEM_ACTOR,
    action: RECONSTRUCTION_CANCELLED_ACTIVITY,
    entityType: "issue_recovery_action",
    entityId: intent.recoveryActionId,
    details: { issueId: intent.issueId, intentId: intent.id, code, message },
  });
}
