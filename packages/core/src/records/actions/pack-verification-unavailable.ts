// R-PV-1: the agent-pack verification hold: two inconclusive reads before the run's first turn.
// It pins no sandbox (no agent ran, so no sandbox holds the task's work; the lease was released
// by its policy): the action names the run, and its evidence the pack and the reads.
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { packRead, type PackRead } from "../agent-pack-verification";
import { PACK_VERIFICATION_UNAVAILABLE_CAUSE, packVerificationUnavailableNextAction } from "../causes";
import { evidenceReader } from "./evidence";
import { openBoardAction, type OpenOutcome } from "./open-board-action";

export const PACK_VERIFICATION_EVIDENCE_SCHEMA = "copyback.agent-pack-verification-unavailable.v1";

export const packVerificationUnavailableEvidence = z.object({
  schema: z.literal(PACK_VERIFICATION_EVIDENCE_SCHEMA),
  runId: z.uuid(),
  /** The lease of the last read (released by policy; diagnostics only, nothing is pinned). */
  lastLeaseId: z.string().nullable(),
  pluginId: z.string().nullable(),
  pack: z.object({ directory: z.string(), runtime: z.string(), version: z.string(), digest: z.string() }),
  reads: z.array(packRead),
  detectedAt: z.string(),
});
export type PackVerificationUnavailableEvidence = z.infer<typeof packVerificationUnavailableEvidence>;

export const readPackVerificationUnavailableEvidence = evidenceReader(packVerificationUnavailableEvidence);

/** Opens the hold in the caller's transaction (one per run and budget: fingerprint `<run>:agent-pack`). */
export async function openPackVerificationUnavailableAction(
  tx: TransactionClient,
  input: Omit<PackVerificationUnavailableEvidence, "schema" | "detectedAt"> & { companyId: string; issueId: string },
): Promise<OpenOutcome> {
  const evidence: PackVerificationUnavailableEvidence = {
    schema: PACK_VERIFICATION_EVIDENCE_SCHEMA,
    runId: input.runId,
    lastLeaseId: input.lastLeaseId,
    pluginId: input.pluginId,
    pack: input.pack,
    reads: input.reads,
    detectedAt: new Date().toISOString(),
  };
  const last: PackRead | undefined = input.reads[input.reads.length - 1];
  return openBoardAction(
    tx,
    { companyId: input.companyId, issueId: input.issueId, runId: input.runId, leaseId: null },
    {
      cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE,
      fingerprint: `${input.runId}:agent-pack`,
      evidence,
      nextAction: packVerificationUnavailableNextAction({ runId: input.runId, runtime: input.pack.runtime, version: input.pack.version, lastReason: last?.reason ?? "unknown" }),
    },
  );
}
