// The one writer of issue_recovery_actions (DESIGN.md section 8). Opening is idempotent by
// company, issue, cause and fingerprint (the partial unique index
// issue_recovery_actions_one_open_per_fingerprint); a repeated open neither rewrites the row nor
// spends an attempt (R-OWN-5). Resolutions made by the reconciler are attributed to the system
// and leave the issue's activity timestamps and everyone's inbox alone.
import { createHash } from "node:crypto";
import { Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import type { DbOrTx } from "./run-log";
import { readFinalizationOwner, readReceiptSha256, receiptSha256Sql } from "./finalization-owner-receipt";
import {
  COPYBACK_FAILED_CAUSE,
  copybackFailedNextAction,
  EXPORT_LIMIT_CAUSE,
  exportLimitNextAction,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
  EXPORT_RETRY_EXHAUSTED_NEXT_ACTION,
  FILE_RECOVERY_CAUSE,
  fileRecoveryNextAction,
  filesGivenUpNextAction,
  LEGACY_COPYBACK_REPAIR_CAUSE,
  LEGACY_COPYBACK_REPAIR_NEXT_ACTION,
  OWNER_UNVERIFIED_CAUSE,
  OWNER_UNVERIFIED_NEXT_ACTION,
} from "./causes";
import type { UnverifiedReason } from "./finalization-owner-receipt";

export const OWNER_UNVERIFIED_EVIDENCE_SCHEMA = "copyback.owner-unverified-evidence.v1";
export const OWNER_ATTESTATION_SCHEMA = "copyback.owner-stop-attestation.v1";

/** What an unverified-owner action records: enough for the exact API call, nothing that grants anything by itself. */
export const ownerUnverifiedEvidence = z.object({
  schema: z.literal(OWNER_UNVERIFIED_EVIDENCE_SCHEMA),
  runId: z.uuid(),
  /** The receipt's token (null for a malformed receipt): the attestation must name it. */
  ownerToken: z.string().nullable(),
  /**
   * Issue 20: for a malformed receipt (ownerToken null), the sha256 of the receipt as stored
   * (finalization-owner.ts receiptSha256Sql): what the attestation names instead of a token
   * (malformedReceiptToken) and what the maintenance SQL's malformed-receipt form matches. Absent
   * on holds opened before it existed: the next finalization pass opens one that names it.
   */
  receiptSha256: z.string().regex(/^[0-9a-f]{64}$/).nullable().optional(),
  owner: z.object({ host: z.string(), pid: z.number(), processStart: z.string(), bootId: z.string() }).nullable(),
  reason: z.string(),
  phase: z.string(),
  resultId: z.string().nullable(),
  leaseIds: z.array(z.string()),
  detectedAt: z.string(),
  attestation: z
    .object({
      schema: z.literal(OWNER_ATTESTATION_SCHEMA),
      ownerToken: z.string(),
      owner: z.unknown(),
      stopEvidence: z.string(),
      actor: z.object({ type: z.string(), id: z.string().nullable() }),
      attestedAt: z.string(),
    })
    .optional(),
});
export type OwnerUnverifiedEvidence = z.infer<typeof ownerUnverifiedEvidence>;

export function readOwnerUnverifiedEvidence(evidence: unknown): OwnerUnverifiedEvidence | null {
  const parsed = ownerUnverifiedEvidence.safeParse(evidence);
  return parsed.success ? parsed.data : null;
}

const MALFORMED_RECEIPT_TOKEN_PREFIX = "malformed-receipt:sha256:";

/**
 * Issue 20: the fixed shape an attestation's `ownerToken` takes for a malformed receipt, which
 * has no token an operator could name: `malformed-receipt:sha256:<the stored receipt's sha256>`.
 * Shown on the hold (recovery show, Recovery details) like a token; admission compares it with
 * the receipt on the run under the advisory lock, so it releases exactly the receipt the
 * operator saw and never a newer owner.
 */
export function malformedReceiptToken(receiptSha256: string): string {
  return `${MALFORMED_RECEIPT_TOKEN_PREFIX}${receiptSha256}`;
}

/** What an attestation of this hold names as `ownerToken`: the receipt's token, or the malformed receipt's fixed reference; null when the hold names neither (opened before receiptSha256 existed). */
export function attestationTokenOf(evidence: Pick<OwnerUnverifiedEvidence, "ownerToken" | "receiptSha256">): string | null {
  if (evidence.ownerToken !== null) return evidence.ownerToken;
  return evidence.receiptSha256 ? malformedReceiptToken(evidence.receiptSha256) : null;
}

/**
 * R-OWN-5: one action per run and owner fingerprint (the token's hash, never the token itself);
 * a malformed receipt's fingerprint is its attestation token's hash, so another malformed receipt
 * is another hold (superseding the older one) and a hold from before receiptSha256 is replaced.
 */
export function ownerFingerprint(runId: string, token: string | null, receiptSha256: string | null = null): string {
  const identity = token ?? (receiptSha256 ? malformedReceiptToken(receiptSha256) : "malformed-receipt");
  const digest = createHash("sha256").update(identity).digest("hex").slice(0, 32);
  return `${runId}:${token === null ? "malformed" : "owner"}:${digest}`;
}

export interface OpenOwnerUnverifiedInput {
  companyId: string;
  issueId: string;
  runId: string;
  receipt: { token: string; host: string; pid: number; processStart: string; bootId: string } | null;
  reason: UnverifiedReason;
  phase: string;
  resultId: string | null;
  leaseIds: string[];
}

export type OpenOutcome = { actionId: string; created: boolean };

/**
 * Opens the board-owned unverified-owner hold, or keeps the open one of the same fingerprint.
 * No automatic wake (R-ORP-4): wake_policy says so. Keeping rewrites nothing except instructions
 * an older version of the product wrote (R-ATT-4: the copyback-specific next action also on
 * older actions whose budget is spent); attempts are never spent.
 */
export async function openOwnerUnverifiedAction(db: DbOrTx, input: OpenOwnerUnverifiedInput): Promise<OpenOutcome> {
  // Issue 20: a hold for a malformed receipt names that exact receipt (its stored sha256), read
  // here; when the run no longer carries a malformed receipt there is nothing to hold (the next
  // pass judges what it carries now).
  let receiptSha256: string | null = null;
  if (input.receipt === null) {
    const run = await db.heartbeatRun.findUnique({ where: { id: input.runId }, select: { runnerProfileJson: true } });
    if (readFinalizationOwner(run?.runnerProfileJson ?? {}).kind !== "malformed") return { actionId: "", created: false };
    receiptSha256 = await readReceiptSha256(db, input.runId);
  }
  const fingerprint = ownerFingerprint(input.runId, input.receipt?.token ?? null, receiptSha256);
  const evidence: OwnerUnverifiedEvidence = {
    schema: OWNER_UNVERIFIED_EVIDENCE_SCHEMA,
    runId: input.runId,
    ownerToken: input.receipt?.token ?? null,
    ...(input.receipt === null ? { receiptSha256 } : {}),
    owner: input.receipt ? { host: input.receipt.host, pid: input.receipt.pid, processStart: input.receipt.processStart, bootId: input.receipt.bootId } : null,
    reason: input.reason,
    phase: input.phase,
    resultId: input.resultId,
    leaseIds: input.leaseIds,
    detectedAt: new Date().toISOString(),
  };
  const inserted = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO issue_recovery_actions
      (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, status, evidence, next_action, wake_policy, attempt_count, max_attempts, updated_at)
    VALUES (gen_random_uuid(), ${input.companyId}::uuid, ${input.issueId}::uuid, ${input.runId}::uuid, ${input.leaseIds[0] ?? null}::uuid,
            ${OWNER_UNVERIFIED_CAUSE}, ${fingerprint}, 'board', 'active', ${JSON.stringify(evidence)}::jsonb, ${OWNER_UNVERIFIED_NEXT_ACTION},
            ${JSON.stringify({ automaticWake: false })}::jsonb, 0, NULL, now())
    ON CONFLICT (company_id, issue_id, cause, fingerprint) WHERE status IN ('active', 'escalated') DO NOTHING
    RETURNING id`;
  if (inserted[0]) {
    // One open hold per run: an older hold of this run names an owner that is no longer the
    // run's receipt (it was attested, or replaced), so the newer one supersedes it (system).
    await db.$executeRaw`
      UPDATE issue_recovery_actions
      SET status = 'resolved', outcome = 'superseded_by_newer_owner', resolved_at = now(), resolved_by_type = 'system', updated_at = now()
      WHERE company_id = ${input.companyId}::uuid AND run_id = ${input.runId}::uuid AND cause = ${OWNER_UNVERIFIED_CAUSE}
        AND status IN ('active', 'escalated') AND id <> ${inserted[0].id}::uuid`;
    return { actionId: inserted[0].id, created: true };
  }
  const existing = await db.issueRecoveryAction.findFirst({
    where: { companyId: input.companyId, issueId: input.issueId, cause: OWNER_UNVERIFIED_CAUSE, fingerprint, status: { in: ["active", "escalated"] } },
    select: { id: true, nextAction: true },
  });
  if (!existing) {
    // Resolved between the insert and the read: open a fresh one on the next pass.
    return { actionId: "", created: false };
  }
  if (existing.nextAction !== OWNER_UNVERIFIED_NEXT_ACTION) {
    await db.issueRecoveryAction.update({ where: { id: existing.id }, data: { nextAction: OWNER_UNVERIFIED_NEXT_ACTION } });
  }
  return { actionId: existing.id, created: false };
}

/** R-ATT-3: the operator's attestation, recorded on the action (which stays open until commitment). */
export async function recordOwnerAttestation(
  tx: TransactionClient,
  input: { actionId: string; ownerToken: string; owner: unknown; stopEvidence: string; actor: { type: string; id: string | null } },
): Promise<void> {
  const attestation = {
    schema: OWNER_ATTESTATION_SCHEMA,
    ownerToken: input.ownerToken,
    owner: input.owner,
    stopEvidence: input.stopEvidence,
    actor: input.actor,
    attestedAt: new Date().toISOString(),
  };
  await tx.$executeRaw`
    UPDATE issue_recovery_actions
    SET evidence = evidence || jsonb_build_object('attestation', ${JSON.stringify(attestation)}::jsonb), updated_at = now()
    WHERE id = ${input.actionId}::uuid`;
}

export const FILES_GIVEN_UP_SCHEMA = "copyback.files-given-up.v1";

/** What a Discard records on each action it acknowledged (read back for the notice and the form). */
const filesGivenUpRecord = z.object({
  schema: z.literal(FILES_GIVEN_UP_SCHEMA),
  leaseId: z.string(),
  by: z.object({ type: z.string(), id: z.string().nullable() }),
  reason: z.string(),
  at: z.string(),
});
export type FilesGivenUp = z.infer<typeof filesGivenUpRecord>;

export function readFilesGivenUp(evidence: unknown): FilesGivenUp | null {
  if (typeof evidence !== "object" || evidence === null || Array.isArray(evidence)) return null;
  const parsed = filesGivenUpRecord.safeParse((evidence as Record<string, unknown>).filesGivenUp);
  return parsed.success ? parsed.data : null;
}

/**
 * Issue 14 (retained sandboxes): an operator discarded the sandbox these actions needed. Each one
 * records that its files were given up, by whom, why and the destruction receipt; it stays open
 * (what it asked for may still be done another way, e.g. reconstruction, which needs the receipt),
 * and its instructions now say that nothing is left to recover (filesGivenUpNextAction).
 */
export async function recordFilesGivenUp(
  tx: TransactionClient,
  input: { actionIds: readonly string[]; leaseId: string; providerLeaseId: string | null; by: { type: string; id: string | null }; reason: string; receipt: unknown },
): Promise<number> {
  if (input.actionIds.length === 0) return 0;
  const at = new Date().toISOString();
  const record = { schema: FILES_GIVEN_UP_SCHEMA, leaseId: input.leaseId, by: input.by, reason: input.reason, receipt: input.receipt, at };
  const nextAction = filesGivenUpNextAction({ providerLeaseId: input.providerLeaseId, byType: input.by.type, at, reason: input.reason });
  return tx.$executeRaw`
    UPDATE issue_recovery_actions
    SET evidence = evidence || jsonb_build_object('filesGivenUp', ${JSON.stringify(record)}::jsonb), next_action = ${nextAction}, updated_at = now()
    WHERE id = ANY(${[...input.actionIds]}::uuid[]) AND status IN ('active', 'escalated')`;
}

const OPEN = ["active", "escalated"] as const;

/** R-ORP-3: verified finalization clears the run's unverified-owner holds after commitment (system). */
export async function resolveOwnerHoldsOnCommit(tx: TransactionClient, input: { companyId: string; runId: string }): Promise<number> {
  const resolved = await tx.issueRecoveryAction.updateMany({
    where: { companyId: input.companyId, runId: input.runId, cause: OWNER_UNVERIFIED_CAUSE, status: { in: [...OPEN] } },
    data: { status: "resolved", outcome: "copyback_committed", resolvedAt: new Date(), resolvedByType: "system" },
  });
  return resolved.count;
}

/**
 * R-OWN-5: ordinary stale-action cleanup. An open unverified-owner action is stale once its run no
 * longer carries its token AND nothing is still waiting on it: the receipt was replaced by another
 * owner, or the coordinator settled. A cleared receipt under an unfinished coordinator (attested,
 * or released by the maintenance SQL) stays open until the sweep commits (R-ATT-3). An attested
 * hold stays open while its coordinator is unfinished even when a new owner's receipt is on the
 * run (R-ATT-3, R-UI-1: the reconciler that copies back after the attestation writes its own
 * receipt, and another reconciler's cleanup must not take "Restoring saved work…" away mid-copy);
 * the commit resolves it as copyback_committed (resolveOwnerHoldsOnCommit), and a newer owner that
 * dies supersedes it with its own hold. Task completion or cancellation plays no part. Attributed
 * to the system; no activity row, no issue timestamp.
 */
export async function cleanupStaleOwnerActions(db: PrismaClient, limit: number): Promise<number> {
  const stale = await db.$queryRaw<{ id: string; final_phase: string | null }[]>(Prisma.sql`
    SELECT a.id, CASE WHEN f.phase IN ('committed', 'terminal_failure') THEN f.phase::text END AS final_phase
    FROM issue_recovery_actions a
    JOIN heartbeat_runs r ON r.id = a.run_id AND r.company_id = a.company_id
    LEFT JOIN native_run_finalizations f ON f.run_id = r.id
    WHERE a.cause = ${OWNER_UNVERIFIED_CAUSE} AND a.status IN ('active', 'escalated')
      -- Issue 20: a malformed receipt's hold names the receipt by its sha256, not by a token.
      AND CASE WHEN a.evidence ->> 'receiptSha256' IS NOT NULL
               THEN ${receiptSha256Sql("r")} IS DISTINCT FROM (a.evidence ->> 'receiptSha256')
               ELSE (r.runner_profile_json -> 'nativeWorkspaceFinalizationOwner' ->> 'token') IS DISTINCT FROM (a.evidence ->> 'ownerToken') END
      AND (r.runner_profile_json ? 'nativeWorkspaceFinalizationOwner' OR f.phase IN ('committed', 'terminal_failure') OR f.phase IS NULL)
      -- R-ATT-3, R-UI-1: an attested hold waits for its coordinator to settle, whoever owns the copy now.
      AND (NOT (a.evidence ? 'attestation') OR f.phase IN ('committed', 'terminal_failure') OR f.phase IS NULL)
    ORDER BY a.created_at
    LIMIT ${limit}`);
  let count = 0;
  for (const row of stale) {
    const updated = await db.issueRecoveryAction.updateMany({
      where: { id: row.id, status: { in: [...OPEN] } },
      data: {
        status: "resolved",
        outcome: row.final_phase === "committed" ? "copyback_committed" : "stale_owner_receipt",
        resolvedAt: new Date(),
        resolvedByType: "system",
      },
    });
    count += updated.count;
  }
  return count;
}

/** R-ATT-4: open unverified-owner holds carry the copyback instructions (only differing rows are written). */
export async function refreshOwnerHoldInstructions(db: PrismaClient): Promise<number> {
  const updated = await db.issueRecoveryAction.updateMany({
    where: { cause: OWNER_UNVERIFIED_CAUSE, status: { in: [...OPEN] }, OR: [{ nextAction: null }, { nextAction: { not: OWNER_UNVERIFIED_NEXT_ACTION } }] },
    data: { nextAction: OWNER_UNVERIFIED_NEXT_ACTION },
  });
  return updated.count;
}

export const EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA = "copyback.export-retry-exhausted-evidence.v1";

export const exportRetryExhaustedEvidence = z.object({
  schema: z.literal(EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA),
  runId: z.uuid(),
  resultId: z.string().nullable(),
  leaseId: z.string().nullable(),
  providerLeaseId: z.string().nullable(),
  pluginId: z.string().nullable(),
  attempts: z.number().int(),
  /** The last attempt's stable code (a transport/copyback failure, never an inferred disk cause). */
  lastFailureCode: z.string(),
  detectedAt: z.string(),
});
export type ExportRetryExhaustedEvidence = z.infer<typeof exportRetryExhaustedEvidence>;

export function readExportRetryExhaustedEvidence(evidence: unknown): ExportRetryExhaustedEvidence | null {
  const parsed = exportRetryExhaustedEvidence.safeParse(evidence);
  return parsed.success ? parsed.data : null;
}

/**
 * R-EX-1, R-EX-4: the board-owned export-only-retry hold, opened in the transaction that fails the
 * run and pins its lease. One per run (fingerprint: the run); no automatic wake, no budget of its own.
 */
export async function openExportRetryExhaustedAction(
  tx: TransactionClient,
  input: Omit<ExportRetryExhaustedEvidence, "schema" | "detectedAt"> & { companyId: string; issueId: string },
): Promise<OpenOutcome> {
  const evidence: ExportRetryExhaustedEvidence = {
    schema: EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA,
    runId: input.runId,
    resultId: input.resultId,
    leaseId: input.leaseId,
    providerLeaseId: input.providerLeaseId,
    pluginId: input.pluginId,
    attempts: input.attempts,
    lastFailureCode: input.lastFailureCode,
    detectedAt: new Date().toISOString(),
  };
  const fingerprint = `${input.runId}:export`;
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO issue_recovery_actions
      (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, status, evidence, next_action, wake_policy, attempt_count, max_attempts, updated_at)
    VALUES (gen_random_uuid(), ${input.companyId}::uuid, ${input.issueId}::uuid, ${input.runId}::uuid, ${input.leaseId}::uuid,
            ${EXPORT_RETRY_EXHAUSTED_CAUSE}, ${fingerprint}, 'board', 'active', ${JSON.stringify(evidence)}::jsonb, ${EXPORT_RETRY_EXHAUSTED_NEXT_ACTION},
            ${JSON.stringify({ automaticWake: false })}::jsonb, ${input.attempts}, ${input.attempts}, now())
    ON CONFLICT (company_id, issue_id, cause, fingerprint) WHERE status IN ('active', 'escalated') DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { actionId: inserted[0].id, created: true };
  const existing = await tx.issueRecoveryAction.findFirst({
    where: { companyId: input.companyId, issueId: input.issueId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE, fingerprint, status: { in: ["active", "escalated"] } },
    select: { id: true },
  });
  return { actionId: existing?.id ?? "", created: false };
}

export const FILE_RECOVERY_EVIDENCE_SCHEMA = "copyback.file-recovery-evidence.v1";

/** How the run ended before its result (what the card says happened). */
export const FILE_RECOVERY_ORIGINS = ["controller_lost", "agent_exited", "provider_failure", "preparation_failure", "runtime_selection_failure"] as const;
export type FileRecoveryOrigin = (typeof FILE_RECOVERY_ORIGINS)[number];

const recordedProcess = z.object({ pid: z.number().int(), startTime: z.string(), bootId: z.string(), host: z.string() });

/**
 * R-FO-1, R-FO-5: what a file-recovery obligation records: the original run, its exact lease and
 * allocation (what the operator must prove stopped and recover files from), why and how the run
 * ended, and what was done to the agent's process. Nothing here grants anything by itself; the
 * resolve service reads it to check that the evidence names this exact source.
 */
export const fileRecoveryEvidence = z.object({
  schema: z.literal(FILE_RECOVERY_EVIDENCE_SCHEMA),
  runId: z.uuid(),
  leaseId: z.string().nullable(),
  /** The same lease as a list, so the lease-holds query keeps it out of reuse by evidence too. */
  leaseIds: z.array(z.string()),
  providerLeaseId: z.string().nullable(),
  pluginId: z.string().nullable(),
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

export function readFileRecoveryEvidence(evidence: unknown): FileRecoveryEvidence | null {
  const parsed = fileRecoveryEvidence.safeParse(evidence);
  return parsed.success ? parsed.data : null;
}

/** One obligation per run: its fingerprint is the run (a repeated failure path keeps the first). */
export function fileRecoveryFingerprint(runId: string): string {
  return `${runId}:files`;
}

export type OpenFileRecoveryInput = Omit<FileRecoveryEvidence, "schema" | "detectedAt" | "leaseIds"> & { companyId: string; issueId: string };

/**
 * R-FO-1, R-FO-3: the board-owned file-recovery obligation, opened in the transaction that pins the
 * run's exact sandbox and fails the run (the caller's). Idempotent by fingerprint (the run): a
 * repeated open neither rewrites the row nor spends anything. No automatic wake: a person records
 * the evidence (R-FO-5); nothing retries the turn.
 */
export async function openFileRecoveryObligation(tx: TransactionClient, input: OpenFileRecoveryInput): Promise<OpenOutcome> {
  const evidence: FileRecoveryEvidence = {
    schema: FILE_RECOVERY_EVIDENCE_SCHEMA,
    runId: input.runId,
    leaseId: input.leaseId,
    leaseIds: input.leaseId ? [input.leaseId] : [],
    providerLeaseId: input.providerLeaseId,
    pluginId: input.pluginId,
    origin: input.origin,
    failureCode: input.failureCode,
    agentProcess: input.agentProcess,
    agentStop: input.agentStop,
    pin: input.pin,
    detectedAt: new Date().toISOString(),
  };
  const fingerprint = fileRecoveryFingerprint(input.runId);
  const nextAction = fileRecoveryNextAction(input);
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO issue_recovery_actions
      (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, status, evidence, next_action, wake_policy, attempt_count, max_attempts, updated_at)
    VALUES (gen_random_uuid(), ${input.companyId}::uuid, ${input.issueId}::uuid, ${input.runId}::uuid, ${input.leaseId}::uuid,
            ${FILE_RECOVERY_CAUSE}, ${fingerprint}, 'board', 'active', ${JSON.stringify(evidence)}::jsonb, ${nextAction},
            ${JSON.stringify({ automaticWake: false })}::jsonb, 0, NULL, now())
    ON CONFLICT (company_id, issue_id, cause, fingerprint) WHERE status IN ('active', 'escalated') DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { actionId: inserted[0].id, created: true };
  const existing = await tx.issueRecoveryAction.findFirst({
    where: { companyId: input.companyId, issueId: input.issueId, cause: FILE_RECOVERY_CAUSE, fingerprint, status: { in: [...OPEN] } },
    select: { id: true },
  });
  return { actionId: existing?.id ?? "", created: false };
}

/** The open file-recovery obligations of a run (the resolve service and the console read these). */
export function listOpenFileRecoveryObligations(db: DbOrTx, input: { companyId: string; runId: string }) {
  return db.issueRecoveryAction.findMany({
    where: { companyId: input.companyId, runId: input.runId, cause: FILE_RECOVERY_CAUSE, status: { in: [...OPEN] } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, issueId: true, runId: true, leaseId: true, evidence: true, nextAction: true, status: true, createdAt: true },
  });
}

export const LEGACY_REPAIR_EVIDENCE_SCHEMA = "copyback.legacy-copyback-repair-evidence.v1";

/**
 * R-RR-2, R-LG-1: what a legacy repair hold records: the source run and its exact retained lease
 * and allocation, how the failure was reported (at the end of the turn, or late after a
 * cancellation that already stopped the lease) and the copy-back's failure code. Grants nothing.
 */
export const legacyRepairEvidence = z.object({
  schema: z.literal(LEGACY_REPAIR_EVIDENCE_SCHEMA),
  runId: z.uuid(),
  leaseId: z.string().nullable(),
  leaseIds: z.array(z.string()),
  providerLeaseId: z.string().nullable(),
  pluginId: z.string().nullable(),
  path: z.enum(["copyback_failed", "late_report"]),
  failureCode: z.string(),
  /** Whether the host had already been written when the copy-back failed (then it was not retried). */
  hostWritesStarted: z.boolean(),
  detectedAt: z.string(),
});
export type LegacyRepairEvidence = z.infer<typeof legacyRepairEvidence>;

export function readLegacyRepairEvidence(evidence: unknown): LegacyRepairEvidence | null {
  const parsed = legacyRepairEvidence.safeParse(evidence);
  return parsed.success ? parsed.data : null;
}

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
    runId: input.runId,
    leaseId: input.leaseId,
    leaseIds: input.leaseId ? [input.leaseId] : [],
    providerLeaseId: input.providerLeaseId,
    pluginId: input.pluginId,
    path: input.path,
    failureCode: input.failureCode,
    hostWritesStarted: input.hostWritesStarted,
    detectedAt: new Date().toISOString(),
  };
  const fingerprint = legacyRepairFingerprint(input.runId, input.leaseId);
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO issue_recovery_actions
      (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, status, evidence, next_action, wake_policy, attempt_count, max_attempts, updated_at)
    VALUES (gen_random_uuid(), ${input.companyId}::uuid, ${input.issueId}::uuid, ${input.runId}::uuid, ${input.leaseId}::uuid,
            ${LEGACY_COPYBACK_REPAIR_CAUSE}, ${fingerprint}, 'board', 'active', ${JSON.stringify(evidence)}::jsonb, ${LEGACY_COPYBACK_REPAIR_NEXT_ACTION},
            ${JSON.stringify({ automaticWake: false })}::jsonb, 0, NULL, now())
    ON CONFLICT (company_id, issue_id, cause, fingerprint) WHERE status IN ('active', 'escalated') DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { actionId: inserted[0].id, created: true };
  const existing = await tx.issueRecoveryAction.findFirst({
    where: { companyId: input.companyId, issueId: input.issueId, cause: LEGACY_COPYBACK_REPAIR_CAUSE, fingerprint, status: { in: [...OPEN] } },
    select: { id: true },
  });
  return { actionId: existing?.id ?? "", created: false };
}

/**
 * R-RR-5, R-FO-5: the one write of a guarded resolution (operator/resolve-recovery-action.ts):
 * only an open action moves, with its outcome, the operator and the verified evidence. Returns
 * whether this call resolved it (false: someone else resolved it meanwhile).
 */
export async function recordRecoveryResolution(
  tx: TransactionClient,
  input: {
    actionId: string;
    outcome: string;
    status: "resolved" | "cancelled";
    actor: { type: "user" | "agent" | "local_board" | "system"; id: string | null };
    note: string | null;
    resolutionEvidence: Prisma.InputJsonObject;
  },
): Promise<boolean> {
  const updated = await tx.issueRecoveryAction.updateMany({
    where: { id: input.actionId, status: { in: [...OPEN] } },
    data: {
      status: input.status,
      outcome: input.outcome,
      resolvedAt: new Date(),
      resolvedByType: input.actor.type,
      resolvedByUserId: input.actor.type === "user" ? input.actor.id : null,
      resolutionNote: input.note,
      resolutionEvidence: input.resolutionEvidence,
    },
  });
  return updated.count === 1;
}

/**
 * R-RC-5: a reconstruction's fresh run was refused at claim or before its provider handoff after
 * its delivery had resolved the hold (outcome `reconstructed`): the hold is open again, exactly as
 * it was, so the task's notice offers a fresh decision. Only that resolution is undone; an action
 * resolved any other way, or a hold whose fingerprint another open action took meanwhile (the
 * partial unique index), stays as it is (false).
 */
export async function reopenAfterReconstructionRefusal(tx: TransactionClient, input: { actionId: string; intentId: string }): Promise<boolean> {
  const reopened = await tx.$executeRaw`
    UPDATE issue_recovery_actions ra
    SET status = 'active'::recovery_status, outcome = NULL, resolved_at = NULL, resolved_by_type = NULL, resolved_by_user_id = NULL,
        resolution_note = NULL, resolution_evidence = NULL, updated_at = now()
    WHERE ra.id = ${input.actionId}::uuid AND ra.status = 'resolved'::recovery_status AND ra.outcome = 'reconstructed'
      AND ra.resolution_evidence ->> 'intentId' = ${input.intentId}
      AND NOT EXISTS (
        SELECT 1 FROM issue_recovery_actions o
        WHERE o.company_id = ra.company_id AND o.issue_id = ra.issue_id AND o.cause = ra.cause AND o.fingerprint = ra.fingerprint
          AND o.status IN ('active', 'escalated') AND o.id <> ra.id)`;
  return reopened === 1;
}

/**
 * R-UA-5: the historical unsafe replay clears the run's matching stale unsafe notices (the old
 * repair card an older controller opened) instead of restoring them: resolved by the system, in
 * the replay's transaction. No activity row, no issue timestamp, nobody's inbox.
 */
export async function clearHistoricalUnsafeNotices(tx: TransactionClient, input: { companyId: string; runId: string; actionIds: readonly string[] }): Promise<number> {
  if (input.actionIds.length === 0) return 0;
  const cleared = await tx.issueRecoveryAction.updateMany({
    where: { id: { in: [...input.actionIds] }, companyId: input.companyId, runId: input.runId, status: { in: ["active", "escalated"] } },
    data: { status: "resolved", outcome: "historical_unsafe_export_omitted", resolvedAt: new Date(), resolvedByType: "system" },
  });
  return cleared.count;
}

export const EXPORT_LIMIT_EVIDENCE_SCHEMA = "copyback.export-limit-evidence.v1";

export const exportLimitEvidence = z.object({
  schema: z.literal(EXPORT_LIMIT_EVIDENCE_SCHEMA),
  runId: z.uuid(),
  resultId: z.string().nullable(),
  leaseId: z.string().nullable(),
  providerLeaseId: z.string().nullable(),
  pluginId: z.string().nullable(),
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

export function readExportLimitEvidence(evidence: unknown): ExportLimitEvidence | null {
  const parsed = exportLimitEvidence.safeParse(evidence);
  return parsed.success ? parsed.data : null;
}

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
    runId: input.runId,
    resultId: input.resultId,
    leaseId: input.leaseId,
    providerLeaseId: input.providerLeaseId,
    pluginId: input.pluginId,
    failureCode: input.failureCode,
    limit: input.limit,
    detectedAt: new Date().toISOString(),
  };
  const fingerprint = `${input.runId}:export-limit`;
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO issue_recovery_actions
      (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, status, evidence, next_action, wake_policy, attempt_count, max_attempts, updated_at)
    VALUES (gen_random_uuid(), ${input.companyId}::uuid, ${input.issueId}::uuid, ${input.runId}::uuid, ${input.leaseId}::uuid,
            ${EXPORT_LIMIT_CAUSE}, ${fingerprint}, 'board', 'active', ${JSON.stringify(evidence)}::jsonb, ${exportLimitNextAction(input.limit)},
            ${JSON.stringify({ automaticWake: false })}::jsonb, 0, NULL, now())
    ON CONFLICT (company_id, issue_id, cause, fingerprint) WHERE status IN ('active', 'escalated') DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { actionId: inserted[0].id, created: true };
  const existing = await tx.issueRecoveryAction.findFirst({
    where: { companyId: input.companyId, issueId: input.issueId, cause: EXPORT_LIMIT_CAUSE, fingerprint, status: { in: ["active", "escalated"] } },
    select: { id: true },
  });
  return { actionId: existing?.id ?? "", created: false };
}

export const COPYBACK_FAILED_EVIDENCE_SCHEMA = "copyback.copyback-failed-evidence.v1";

/** At most this many conflicts are named on the hold (the count is kept); the operation keeps its own list. */
export const MAX_HOLD_CONFLICTS = 20;

/**
 * R-EX-4, R-UI-2: what a copyback-failed hold records: the run, its accepted result, its exact
 * lease and allocation (what the operator recovers files from), what went wrong, whether host
 * writes began, the first conflicts (workspace-relative paths only, R-UA-4) and the pin's outcome in
 * the same transaction. Grants nothing by itself; the resolve service reads the source from it.
 */
export const copybackFailedEvidence = z.object({
  schema: z.literal(COPYBACK_FAILED_EVIDENCE_SCHEMA),
  runId: z.uuid(),
  resultId: z.string().nullable(),
  leaseId: z.string().nullable(),
  /** The same lease as a list, so the lease-holds query keeps it out of reuse by evidence too. */
  leaseIds: z.array(z.string()),
  providerLeaseId: z.string().nullable(),
  pluginId: z.string().nullable(),
  /** result_refused: the files reached the host (the barrier stands) but the commit refused the result. */
  failure: z.enum(["merge_conflict", "binding_changed", "copyback_failed", "result_refused"]),
  /** The run's terminal code (workspace_merge_conflict, finalization_binding_changed, copyback_write_failed, ...). */
  failureCode: z.string(),
  hostWritesStarted: z.boolean(),
  conflictCount: z.number().int().nullable(),
  conflicts: z.array(z.object({ path: z.string(), kind: z.string() })),
  /** The binding check's refusal code (finalization/binding.ts) when the task moved on; else null. */
  bindingReason: z.string().nullable(),
  /** The stop-only intent's outcome in the same transaction (stop-intent.ts). */
  pin: z.enum(["pinned", "already_pinned", "nothing_to_pin"]),
  detectedAt: z.string(),
});
export type CopybackFailedEvidence = z.infer<typeof copybackFailedEvidence>;

export function readCopybackFailedEvidence(evidence: unknown): CopybackFailedEvidence | null {
  const parsed = copybackFailedEvidence.safeParse(evidence);
  return parsed.success ? parsed.data : null;
}

/**
 * R-EX-4, R-UI-2: the board-owned hold of a copyback that failed for good (a merge conflict, a
 * task that moved on before publication, or another final failure, possibly after host writes
 * began), opened in the transaction that fails the run and pins its lease: a crash can leave
 * neither without the other. One per run; no automatic wake; resolved through the guarded resolve
 * service like the other file holds.
 */
export async function openCopybackFailedAction(
  tx: TransactionClient,
  input: Omit<CopybackFailedEvidence, "schema" | "detectedAt" | "leaseIds" | "conflicts"> & {
    companyId: string;
    issueId: string;
    conflicts: readonly { path: string; kind: string }[];
  },
): Promise<OpenOutcome> {
  const evidence: CopybackFailedEvidence = {
    schema: COPYBACK_FAILED_EVIDENCE_SCHEMA,
    runId: input.runId,
    resultId: input.resultId,
    leaseId: input.leaseId,
    leaseIds: input.leaseId ? [input.leaseId] : [],
    providerLeaseId: input.providerLeaseId,
    pluginId: input.pluginId,
    failure: input.failure,
    failureCode: input.failureCode,
    hostWritesStarted: input.hostWritesStarted,
    conflictCount: input.conflictCount,
    conflicts: input.conflicts.slice(0, MAX_HOLD_CONFLICTS).map((c) => ({ path: c.path, kind: c.kind })),
    bindingReason: input.bindingReason,
    pin: input.pin,
    detectedAt: new Date().toISOString(),
  };
  const fingerprint = `${input.runId}:copyback-failed`;
  const nextAction = copybackFailedNextAction(input);
  const inserted = await tx.$queryRaw<{ id: string }[]>`
    INSERT INTO issue_recovery_actions
      (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, status, evidence, next_action, wake_policy, attempt_count, max_attempts, updated_at)
    VALUES (gen_random_uuid(), ${input.companyId}::uuid, ${input.issueId}::uuid, ${input.runId}::uuid, ${input.leaseId}::uuid,
            ${COPYBACK_FAILED_CAUSE}, ${fingerprint}, 'board', 'active', ${JSON.stringify(evidence)}::jsonb, ${nextAction},
            ${JSON.stringify({ automaticWake: false })}::jsonb, 0, NULL, now())
    ON CONFLICT (company_id, issue_id, cause, fingerprint) WHERE status IN ('active', 'escalated') DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { actionId: inserted[0].id, created: true };
  const existing = await tx.issueRecoveryAction.findFirst({
    where: { companyId: input.companyId, issueId: input.issueId, cause: COPYBACK_FAILED_CAUSE, fingerprint, status: { in: [...OPEN] } },
    select: { id: true },
  });
  return { actionId: existing?.id ?? "", created: false };
}
