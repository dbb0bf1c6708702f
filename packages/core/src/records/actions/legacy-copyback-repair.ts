// The legacy repair hold (R-RR-2, R-LG-1): a legacy run could not copy its required files back,
// and its allocation is stopped and retained until a board operator records the repair.
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { LEGACY_COPYBACK_REPAIR_CAUSE, LEGACY_COPYBACK_REPAIR_NEXT_ACTION } from "../causes";
import { evidenceReader, leaseIdsOf, pinnedSandboxFields, pinnedSandboxOf } from "./evidence";
import { openBoardAction, type OpenOutcome } from "./open-board-action";

export const LEGACY_REPAIR_EVIDENCE_SCHEMA = "copyback.legacy-copyback-repair-evidence.v1";

/**
 * R-RR-2, R-LG-1: what a legacy repair hold records: the source run and its exact retained lease
 * and allocation, how the failure was reported (at the end of the turn, or late after a
 * cancellation that already stopped the lease) and the copy-back's failure code. Grants nothing.
 */
export const legacyRepairEvidence = z.object({
  schema: z.literal(LEGACY_REPAIR_EVIDENCE_SCHEMA),
  ...pinnedSandboxFields,
  leaseIds: z.array(z.string()),
  path: z.enum(["copyback_failed", "late_report"]),
  failureCode: z.string(),
  /** Whether the host had already been written when the copy-back failed (then it was not retried). */
  hostWritesStarted: z.boolean(),
  detectedAt: z.string(),
});
export type LegacyRepairEvidence = z.infer<typeof legacyRepairEvidence>;

export const readLegacyRepairEvidence = evidenceReader(legacyRepairEvidence);

/** One hold per run and lease. */
export function legacyRepairFingerprint(runId: string, leaseId: string | null): string {
  return `${runId}:legacy-copyback:${leaseId ?? "no-lease"}`;
}

export type OpenLegacyRepairInput = Omit<LegacyRepairEvidence, "schema" | "detectedAt" | "leaseIds"> & { companyId: string; issueId: string };

/**
 * R-RR-2: the board-owned legacy repair hold, opened in the caller's transaction (with the failed
 * run and the lease's retention intent). It supersedes nothing: unlike the unverified-owner hold,
 * no other open action is touched here, so it coexists with newer incidents, and no other writer
 * resolves it (only the guarded resolve service does, R-RR-5). It names no agent and no
 * conversation, so reassignment and conversation resets leave it as it is. No automatic wake.
 */
export async function openLegacyCopybackRepairAction(tx: TransactionClient, input: OpenLegacyRepairInput): Promise<OpenOutcome> {
  const evidence: LegacyRepairEvidence = {
    schema: LEGACY_REPAIR_EVIDENCE_SCHEMA,
    ...pinnedSandboxOf(input),
    leaseIds: leaseIdsOf(input.leaseId),
    path: input.path,
    failureCode: input.failureCode,
    hostWritesStarted: input.hostWritesStarted,
    detectedAt: new Date().toISOString(),
  };
  return openBoardAction(tx, input, {
    cause: LEGACY_COPYBACK_REPAIR_CAUSE,
    fingerprint: legacyRepairFingerprint(input.runId, input.leaseId),
    evidence,
    nextAction: LEGACY_COPYBACK_REPAIR_NEXT_ACTION,
  });
}
