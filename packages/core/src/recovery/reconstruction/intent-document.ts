// The JSON documents of a reconstruction intent, parsed at the boundary (DESIGN.md section 2):
//   attachment_hashes        [{ attachmentId, sha256, sizeBytes }] of the selected attachments;
//   external_action_outcomes { schema, observed: the operator's outcomes, decision: the
//                              identities and hashes the admission decided on (SavedDecision:
//                              result, descriptor, destruction receipt, retry budget and each
//                              coexisting later cancellation's Stop acknowledgement, stop
//                              receipts and file-only repair, R-RC-6) }.
// Every later moment (delivery, claim, handoff) rechecks against these; a malformed document
// grants nothing (the recheck refuses sources_changed).
import { z } from "zod";
import type { SavedDecision } from "./decide-reconstruction";
import type { AttachmentHash, ExternalActionOutcome } from "./contract";

export const RECONSTRUCTION_OUTCOMES_SCHEMA = "copyback.reconstruction-outcomes.v1";

export const attachmentHashesSchema = z.array(z.strictObject({ attachmentId: z.uuid(), sha256: z.string().regex(/^[0-9a-f]{64}$/), sizeBytes: z.number().int().min(0) }));

const savedDecisionSchema = z.strictObject({
  resultId: z.string().min(1),
  descriptorLeaseId: z.string().min(1),
  destructionRequestId: z.string().min(1),
  retryBudget: z.number().int().min(0),
  laterCancellations: z.array(
    z.strictObject({
      runId: z.string().min(1),
      stopAcknowledgementRequestId: z.string().min(1),
      leaseReceipts: z.array(z.strictObject({ leaseId: z.string().min(1), requestId: z.string().min(1) })),
      repair: z.strictObject({ actionId: z.string().min(1), evidenceSha256: z.string().min(1) }).nullable(),
    }),
  ),
});

const outcomesDocumentSchema = z.strictObject({
  schema: z.literal(RECONSTRUCTION_OUTCOMES_SCHEMA),
  observed: z.array(z.strictObject({ action: z.string(), outcome: z.enum(["performed", "not_performed", "unknown"]), evidence: z.string().optional() })),
  decision: savedDecisionSchema,
});

export function outcomesDocument(observed: readonly ExternalActionOutcome[], decision: SavedDecision) {
  return { schema: RECONSTRUCTION_OUTCOMES_SCHEMA, observed: observed.map((o) => ({ ...o })), decision };
}

export function readAttachmentHashes(json: unknown): AttachmentHash[] | null {
  const parsed = attachmentHashesSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

export function readOutcomesDocument(json: unknown): { observed: ExternalActionOutcome[]; decision: SavedDecision } | null {
  const parsed = outcomesDocumentSchema.safeParse(json);
  return parsed.success ? { observed: parsed.data.observed, decision: parsed.data.decision } : null;
}
