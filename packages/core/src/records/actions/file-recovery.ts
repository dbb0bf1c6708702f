// The file-recovery obligation (R-FO-1, R-FO-3, R-FO-5): a native run failed before its result,
// its exact sandbox is pinned for the files its agent wrote, and a board operator records the
// evidence that the allocation stopped and its files were recovered. Stored as a recovery action.
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { FILE_RECOVERY_CAUSE, fileRecoveryNextAction } from "../causes";
import { evidenceReader, leaseIdsOf, pinnedSandboxFields, pinnedSandboxOf } from "./evidence";
import { openBoardAction, type OpenOutcome } from "./open-board-action";

export const FILE_RECOVERY_EVIDENCE_SCHEMA = "copyback.file-recovery-evidence.v1";

/** How the run ended before its result (what the card says happened). */
export const FILE_RECOVERY_ORIGINS = ["controller_lost", "agent_exited", "provider_failure", "preparation_failure", "runtime_selection_failure"] as const;
export type FileRecoveryOrigin = (typeof FILE_RECOVERY_ORIGINS)[number];

const recordedProcess = z.object({ pid: z.number().int(), startTime: z.string(), bootId: z.string(), host: z.string() });

/**
 * R-FO-1, R-FO-5: what a file-recovery action records: the original run, its exact lease and
 * allocation (what the operator must prove stopped and recover files from), why and how the run
 * ended, and what was done to the agent's process. Nothing here grants anything by itself; the
 * resolve service reads it to check that the evidence names this exact source.
 */
export const fileRecoveryEvidence = z.object({
  schema: z.literal(FILE_RECOVERY_EVIDENCE_SCHEMA),
  ...pinnedSandboxFields,
  /** The same lease as a list, so the lease-holds query keeps it out of reuse by evidence too. */
  leaseIds: z.array(z.string()),
  origin: z.enum(FILE_RECOVERY_ORIGINS),
  /** The run's failure code (process_lost, agent_exit_nonzero, workspace_prepare_failed, ...). */
  failureCode: z.string(),
  /** The agent's process as the run recorded it (R-OWN-12), when it had one. */
  agentProcess: recordedProcess.nullable(),
  /** What the recovery did to that process before the run was failed (orphans only). */
  agentStop: z.enum(["stopped", "not_running", "not_recorded", "other_host"]).nullable(),
  /** The stop-only intent's outcome in the same transaction (stop-intent.ts). */
  pin: z.enum(["pinned", "already_pinned", "nothing_to_pin"]),
  detectedAt: z.string(),
});
export type FileRecoveryEvidence = z.infer<typeof fileRecoveryEvidence>;

export const readFileRecoveryEvidence = evidenceReader(fileRecoveryEvidence);

/** One file-recovery action per run: its fingerprint is the run (a repeated failure path keeps the first). */
export function fileRecoveryFingerprint(runId: string): string {
  return `${runId}:files`;
}

export type OpenFileRecoveryInput = Omit<FileRecoveryEvidence, "schema" | "detectedAt" | "leaseIds"> & { companyId: string; issueId: string };

/**
 * R-FO-1, R-FO-3: the board-owned file-recovery action, opened in the transaction that pins the
 * run's exact sandbox and fails the run (the caller's). Idempotent by fingerprint (the run): a
 * repeated open neither rewrites the row nor spends anything. No automatic wake: a person records
 * the evidence (R-FO-5); nothing retries the turn.
 */
export async function openFileRecoveryAction(tx: TransactionClient, input: OpenFileRecoveryInput): Promise<OpenOutcome> {
  const evidence: FileRecoveryEvidence = {
    schema: FILE_RECOVERY_EVIDENCE_SCHEMA,
    ...pinnedSandboxOf(input),
    leaseIds: leaseIdsOf(input.leaseId),
    origin: input.origin,
    failureCode: input.failureCode,
    agentProcess: input.agentProcess,
    agentStop: input.agentStop,
    pin: input.pin,
    detectedAt: new Date().toISOString(),
  };
  return openBoardAction(tx, input, {
    cause: FILE_RECOVERY_CAUSE,
    fingerprint: fileRecoveryFingerprint(input.runId),
    evidence,
    nextAction: fileRecoveryNextAction(input),
  });
}
