// The answer shape of a reconstruction intent (REST, tRPC, CLI and the offer), parsed at the
// boundary: attachment_hashes is JSON, and a malformed document shows as no attachments rather
// than as something it is not.
import type { ReconstructionIntent } from "@copyback/db/client";
import { z } from "zod";
import type { AttachmentHash, ReconstructionIntentView } from "../operator/reconstruct-workspace";

export const attachmentHashesSchema = z.array(z.strictObject({ attachmentId: z.uuid(), sha256: z.string().regex(/^[0-9a-f]{64}$/), sizeBytes: z.number().int().min(0) }));

export function readAttachmentHashes(json: unknown): AttachmentHash[] | null {
  const parsed = attachmentHashesSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

export function intentView(row: ReconstructionIntent): ReconstructionIntentView {
  return {
    id: row.id,
    status: row.status,
    actionId: row.recoveryActionId,
    sourceRunId: row.sourceRunId,
    leaseId: row.leaseId,
    requestId: row.requestId,
    attachmentHashes: readAttachmentHashes(row.attachmentHashes) ?? [],
    deliveredRunId: row.deliveredRunId,
    createdAt: row.createdAt.toISOString(),
  };
}
