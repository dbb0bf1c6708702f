// The export-limit hold (R-UA-3, R-UA-4): an export over an archive limit, or with colliding
// paths, fails the run and pins its lease; nothing is written and nothing silently omitted.
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { EXPORT_LIMIT_CAUSE, exportLimitNextAction } from "../causes";
import { evidenceReader, pinnedSandboxFields, pinnedSandboxOf } from "./evidence";
import { openBoardAction, type OpenOutcome } from "./open-board-action";

export const EXPORT_LIMIT_EVIDENCE_SCHEMA = "copyback.export-limit-evidence.v1";

export const exportLimitEvidence = z.object({
  schema: z.literal(EXPORT_LIMIT_EVIDENCE_SCHEMA),
  ...pinnedSandboxFields,
  resultId: z.string().nullable(),
  /** The run's terminal code (native_workspace_sync_out_<limit>). */
  failureCode: z.string(),
  /** export-policy.ts ExportLimitDetail: the limit crossed, its value, the first archive-relative path. */
  limit: z.object({
    kind: z.enum(["limit", "collision"]),
    violation: z.string(),
    limit: z.string().nullable(),
    max: z.number().nullable(),
    path: z.string(),
    violationCodes: z.array(z.string()),
  }),
  detectedAt: z.string(),
});
export type ExportLimitEvidence = z.infer<typeof exportLimitEvidence>;

export const readExportLimitEvidence = evidenceReader(exportLimitEvidence);

/**
 * R-UA-3, R-UA-4: the board-owned hold of an export over an archive limit (or with colliding
 * paths), opened in the transaction that fails the run and pins its lease, so nothing is lost and
 * nothing is silently omitted. One per run; its next action names the limit; no automatic wake.
 */
export async function openExportLimitAction(
  tx: TransactionClient,
  input: Omit<ExportLimitEvidence, "schema" | "detectedAt"> & { companyId: string; issueId: string },
): Promise<OpenOutcome> {
  const evidence: ExportLimitEvidence = {
    schema: EXPORT_LIMIT_EVIDENCE_SCHEMA,
    ...pinnedSandboxOf(input),
    resultId: input.resultId,
    failureCode: input.failureCode,
    limit: input.limit,
    detectedAt: new Date().toISOString(),
  };
  return openBoardAction(tx, input, {
    cause: EXPORT_LIMIT_CAUSE,
    fingerprint: `${input.runId}:export-limit`,
    evidence,
    nextAction: exportLimitNextAction(input.limit),
  });
}
