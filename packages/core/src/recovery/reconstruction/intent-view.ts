// The answer shape of a reconstruction intent (REST, tRPC, CLI and the offer).
import type { ReconstructionIntent } from "@copyback/db/client";
import type { ReconstructionIntentView } from "../operator/reconstruct-workspace";
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
  };
}
