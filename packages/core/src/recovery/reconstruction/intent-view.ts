// The answer shape of a reconstruction intent (REST, tRPC, CLI and the offer).
import type { ReconstructionIntent } from "@copyback/db/client";
import type { ReconstructionIntentView } from "./contract";
import { deferralOf } from "../reconstruction-state";
import { deferralMessage } from "../task-notice";
import { readAttachmentHashes } from "./intent-document";

export function intentView(row: ReconstructionIntent): ReconstructionIntentView {
  return {
    id: row.id,
    status: row.status,
    actionId: row.recoveryActionId,
    sourceRunId: row.sourceRunId,
    leaseId: row.leaseId,
    requestId: row.requestId,
    // A malformed document shows as no attachments rather than as something it is not.
    attachmentHashes: readAttachmentHashes(row.attachmentHashes) ?? [],
    deliveredRunId: row.deliveredRunId,
    createdAt: row.createdAt.toISOString(),
    deferral: deferralView(row),
  };
}

/** Only a pending intent waits; the message is the sentence the sweep stored (core's fixed text for the code). */
function deferralView(row: ReconstructionIntent): ReconstructionIntentView["deferral"] {
  const deferral = row.status === "pending" ? deferralOf(row) : null;
  return deferral ? { code: deferral.code, message: row.deferralMessage ?? deferralMessage(deferral.code), since: deferral.since.toISOString(), lastSeenAt: deferral.lastSeenAt.toISOString() } : null;
}
