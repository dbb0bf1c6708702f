// R-RC-5, R-RC-6: the one recheck a reconstruction's run passes at claim (dispatch/claim-runs.ts) and
// immediately before the provider gets it (dispatch/execute-run.ts, before the sandbox is
// acquired). A run without reconstruction authority is ordinary and passes untouched. One with it
// (the delivered run, or a bounded retry that inherited it) is admitted only while its exact
// intent, the saved sources and hashes, the repair decisions of later cancellations, the
// execution gates, the chain of system retry wakes back to the delivered (approved first) run and
// the retry budget all still hold, and no person has changed the task's status or assignee since
// the intent (a later human block is never overwritten by automatic checkout).
import type { TransactionClient } from "@copyback/db/client";
import { decideReconstruction, onlyFinalizationLockBusy } from "./decide-reconstruction";
import { recordActivity, SYSTEM_ACTOR } from "../../records/record-activity";
import { reopenAfterReconstructionRefusal } from "../../records/actions";
import { reconstructionContext } from "./authority";
import { readReconstructionAuthority } from "../../records/reconstruction-authority";
import { requestOfIntent, storedBytesOfIntent } from "./deliver-intent";
import { loadReconstructionSnapshot } from "./load-snapshot";
import { RECONSTRUCTION_WITHDRAWN_ACTIVITY } from "../reconstruction-state";

export type GateOutcome =
  | { kind: "ordinary" }
  | { kind: "admit"; intentId: string; context: ReturnType<typeof reconstructionContext> }
  | { kind: "reject"; intentId: string | null; code: string; message: string }
  // Only the source run's finalization lock is busy (onlyFinalizationLockBusy): try again shortly.
  | { kind: "busy"; intentId: string; message: string };

export async function reconstructionGate(tx: TransactionClient, input: { runId: string; stage: "claim" | "handoff"; instanceRoot: string | undefined }): Promise<GateOutcome> {
  const run = await tx.heartbeatRun.findUnique({ where: { id: input.runId }, select: { runnerProfileJson: true } });
  const authority = readReconstructionAuthority(run?.runnerProfileJson);
  if (authority.kind === "none") return { kind: "ordinary" };
  if (authority.kind === "malformed") return { kind: "reject", intentId: null, code: "sources_changed", message: "The run's reconstruction authority is unreadable." };
  const intent = await tx.reconstructionIntent.findUnique({ where: { id: authority.intentId } });
  if (!intent) return { kind: "reject", intentId: authority.intentId, code: "sources_changed", message: "The run's reconstruction intent no longer exists." };
  // Without the attachment store's root nothing can be verified: every selected attachment is unavailable.
  const stored = input.instanceRoot ? await storedBytesOfIntent(tx, input.instanceRoot, intent) : new Map();
  const snapshot = await loadReconstructionSnapshot(tx, { stage: input.stage, request: requestOfIntent(intent), intent, dispatchedRunId: input.runId, stored });
  const decision = decideReconstruction(snapshot);
  if (decision.kind === "reject") {
    if (decision.code === "active_copyback_owner" && onlyFinalizationLockBusy(snapshot)) return { kind: "busy", intentId: intent.id, message: decision.message };
    return { kind: "reject", intentId: intent.id, code: decision.code, message: decision.message };
  }
  if (decision.kind !== "admit") return { kind: "reject", intentId: intent.id, code: "sources_changed", message: "The intent is not the run's." };
  const attachments = await tx.issueAttachment.findMany({
    where: { id: { in: decision.attachmentHashes.map((h) => h.attachmentId) }, companyId: intent.companyId, issueId: intent.issueId },
    select: { id: true, fileName: true, contentType: true },
  });
  return { kind: "admit", intentId: intent.id, context: reconstructionContext(intent, new Map(attachments.map((a) => [a.id, { name: a.fileName, contentType: a.contentType }]))) };
}

/**
 * A refused reconstruction run (claim or handoff): its intent is cancelled (it keeps the run it was
 * delivered to) and the hold its delivery resolved is open again, so the operator decides afresh;
 * the refused run itself is settled by its caller. One activity row says why.
 */
export async function withdrawReconstruction(tx: TransactionClient, input: { intentId: string; runId: string; code: string; message: string }): Promise<void> {
  const intent = await tx.reconstructionIntent.findUnique({ where: { id: input.intentId } });
  if (!intent || intent.status !== "delivered") return;
  await tx.reconstructionIntent.update({ where: { id: intent.id }, data: { status: "cancelled" } });
  const reopened = await reopenAfterReconstructionRefusal(tx, { actionId: intent.recoveryActionId, intentId: intent.id });
  await recordActivity(tx, {
    companyId: intent.companyId,
    actor: SYSTEM_ACTOR,
    action: RECONSTRUCTION_WITHDRAWN_ACTIVITY,
    entityType: "issue_recovery_action",
    entityId: intent.recoveryActionId,
    details: { issueId: intent.issueId, intentId: intent.id, runId: input.runId, code: input.code, message: input.message, holdReopened: reopened },
  });
}
