// The export-only-retry hold (R-EX-1, R-EX-4): the third transient export failure spent the
// budget; the run is failed, its lease pinned, and a runtime manager requests the export-only
// retry (actions-export-retry.ts records it on this hold).
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { EXPORT_RETRY_EXHAUSTED_CAUSE, EXPORT_RETRY_EXHAUSTED_NEXT_ACTION } from "../causes";
import { evidenceReader, pinnedSandboxFields, pinnedSandboxOf } from "./evidence";
import { openBoardAction, type OpenOutcome } from "./open-board-action";

export const EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA = "copyback.export-retry-exhausted-evidence.v1";

export const exportRetryExhaustedEvidence = z.object({
  schema: z.literal(EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA),
  ...pinnedSandboxFields,
  resultId: z.string().nullable(),
  attempts: z.number().int(),
  /** The last attempt's stable code (a transport/copyback failure, never an inferred disk cause). */
  lastFailureCode: z.string(),
  detectedAt: z.string(),
});
export type ExportRetryExhaustedEvidence = z.infer<typeof exportRetryExhaustedEvidence>;

export const readExportRetryExhaustedEvidence = evidenceReader(exportRetryExhaustedEvidence);

/**
 * R-EX-1, R-EX-4: the board-owned export-only-retry hold, opened in the transaction that fails the
 * run and pins its lease. One per run (fingerprint: the run); no automatic wake, no budget of its
 * own: it records the spent one.
 */
export async function openExportRetryExhaustedAction(
  tx: TransactionClient,
  input: Omit<ExportRetryExhaustedEvidence, "schema" | "detectedAt"> & { companyId: string; issueId: string },
): Promise<OpenOutcome> {
  const evidence: ExportRetryExhaustedEvidence = {
    schema: EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA,
    ...pinnedSandboxOf(input),
    resultId: input.resultId,
    attempts: input.attempts,
    lastFailureCode: input.lastFailureCode,
    detectedAt: new Date().toISOString(),
  };
  return openBoardAction(tx, input, {
    cause: EXPORT_RETRY_EXHAUSTED_CAUSE,
    fingerprint: `${input.runId}:export`,
    evidence,
    nextAction: EXPORT_RETRY_EXHAUSTED_NEXT_ACTION,
    attempts: { count: input.attempts, max: input.attempts },
  });
}
