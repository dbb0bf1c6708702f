// The unverified-owner hold (R-ORP-4, R-OWN-5): its evidence, the owner fingerprint, the opener and
// the operator's attestation recorded on it. The hold keeps the sandbox, the accepted result and
// the workspace descriptor as they are until the same run's copyback commits.
import { createHash } from "node:crypto";
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import type { DbOrTx } from "../run-log";
import { readFinalizationOwner, readReceiptSha256, type UnverifiedReason } from "../finalization-owner-receipt";
import { OWNER_UNVERIFIED_CAUSE, OWNER_UNVERIFIED_NEXT_ACTION } from "../causes";
import { evidenceReader } from "./evidence";
import { openBoardAction, type OpenOutcome } from "./open-board-action";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "./open-statuses-sql";

export const OWNER_UNVERIFIED_EVIDENCE_SCHEMA = "copyback.owner-unverified-evidence.v1";
export const OWNER_ATTESTATION_SCHEMA = "copyback.owner-stop-attestation.v1";

/** R-RW-3: the harness receipt an automatic takeover verified, kept as its proof. */
export const stopProof = z.object({
  kind: z.literal("harness_receipt"),
  kid: z.string(),
  jti: z.string(),
  receipt: z.string(),
  deployment: z.unknown(),
  verifiedAt: z.string(),
});
export type StopProof = z.infer<typeof stopProof>;

/** What an unverified-owner hold records: enough for the exact API call, nothing that grants anything by itself. */
export const ownerUnverifiedEvidence = z.object({
  schema: z.literal(OWNER_UNVERIFIED_EVIDENCE_SCHEMA),
  runId: z.uuid(),
  /** The receipt's token (null for a malformed receipt): the attestation must name it. */
  ownerToken: z.string().nullable(),
  /**
   * For a malformed receipt (ownerToken null), the sha256 of the receipt as stored
   * (finalization-owner-receipt.ts receiptSha256Sql): what the attestation names instead of a
   * token (malformedReceiptToken) and what the maintenance SQL's malformed-receipt form matches
   * (R-ATT-5). Absent on holds opened before it existed: the next finalization pass opens one
   * that names it.
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
      /** R-RW-3: an automatic takeover's proof: the harness's verified stop receipt (absent on an operator's). */
      proof: stopProof.optional(),
    })
    .optional(),
  /**
   * R-RW-3: the last refusal of an automatic takeover (a fixed code), for Recovery details; written
   * only when the code changes, so repeated checks do not rewrite the hold (R-OWN-5).
   */
  harnessCheck: z.object({ code: z.string(), message: z.string(), checkedAt: z.string() }).optional(),
});
export type OwnerUnverifiedEvidence = z.infer<typeof ownerUnverifiedEvidence>;

export const readOwnerUnverifiedEvidence = evidenceReader(ownerUnverifiedEvidence);

const MALFORMED_RECEIPT_TOKEN_PREFIX = "malformed-receipt:sha256:";

/**
 * The fixed shape an attestation's `ownerToken` takes for a malformed receipt, which has no token
 * an operator could name: `malformed-receipt:sha256:<the stored receipt's sha256>`. Shown on the
 * hold (recovery show, Recovery details) like a token; admission compares it with the receipt on
 * the run under the advisory lock, so it releases exactly the receipt the operator saw and never
 * a newer owner (R-ATT-3).
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
 * R-OWN-5: one hold per run and owner fingerprint (the token's hash, never the token itself);
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

/**
 * Opens the board-owned unverified-owner hold, or keeps the open one of the same fingerprint.
 * No automatic wake (R-ORP-4): wake_policy says so. Keeping rewrites nothing except instructions
 * an older version of the product wrote (R-ATT-4: the copyback-specific next action also on
 * older holds whose budget is spent); attempts are never spent.
 */
export async function openOwnerUnverifiedAction(db: DbOrTx, input: OpenOwnerUnverifiedInput): Promise<OpenOutcome> {
  // A hold for a malformed receipt names that exact receipt (its stored sha256), read here; when
  // the run no longer carries a malformed receipt there is nothing to hold (the next pass judges
  // what it carries now).
  let receiptSha256: string | null = null;
  if (input.receipt === null) {
    const run = await db.heartbeatRun.findUnique({ where: { id: input.runId }, select: { runnerProfileJson: true } });
    if (readFinalizationOwner(run?.runnerProfileJson ?? {}).kind !== "malformed") return { actionId: "", created: false };
    receiptSha256 = await readReceiptSha256(db, input.runId);
  }
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
  const place = { companyId: input.companyId, issueId: input.issueId, runId: input.runId, leaseId: input.leaseIds[0] ?? null };
  const opened = await openBoardAction(db, place, {
    cause: OWNER_UNVERIFIED_CAUSE,
    fingerprint: ownerFingerprint(input.runId, input.receipt?.token ?? null, receiptSha256),
    evidence,
    nextAction: OWNER_UNVERIFIED_NEXT_ACTION,
    refreshNextActionOnKeep: true,
  });
  if (opened.created) {
    // One open hold per run: an older hold of this run names an owner that is no longer the
    // run's receipt (it was attested, or replaced), so the newer one supersedes it (system).
    await db.$executeRaw`
      UPDATE issue_recovery_actions
      SET status = 'resolved', outcome = 'superseded_by_newer_owner', resolved_at = now(), resolved_by_type = 'system', updated_at = now()
      WHERE company_id = ${input.companyId}::uuid AND run_id = ${input.runId}::uuid AND cause = ${OWNER_UNVERIFIED_CAUSE}
        AND status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL} AND id <> ${opened.actionId}::uuid`;
  }
  return opened;
}

/** R-ATT-3: the operator's attestation, recorded on the hold (which stays open until commitment). */
export async function recordOwnerAttestation(
  tx: TransactionClient,
  input: { actionId: string; ownerToken: string; owner: unknown; stopEvidence: string; actor: { type: string; id: string | null }; proof?: StopProof },
): Promise<void> {
  const attestation = {
    schema: OWNER_ATTESTATION_SCHEMA,
    ownerToken: input.ownerToken,
    owner: input.owner,
    stopEvidence: input.stopEvidence,
    actor: input.actor,
    attestedAt: new Date().toISOString(),
    ...(input.proof ? { proof: input.proof } : {}),
  };
  await tx.$executeRaw`
    UPDATE issue_recovery_actions
    SET evidence = evidence || jsonb_build_object('attestation', ${JSON.stringify(attestation)}::jsonb), updated_at = now()
    WHERE id = ${input.actionId}::uuid`;
}

/**
 * R-RW-3: records why an automatic takeover did not happen (a fixed code) on the open hold, only
 * when the code differs from the one recorded; true when it wrote (the caller then logs it once).
 * Never on a hold already attested: a pass racing the takeover would otherwise tell Recovery
 * details and the run log that a copyback being restored is fenced for an operator.
 */
export async function recordHarnessCheck(db: DbOrTx, input: { actionId: string; code: string; message: string }): Promise<boolean> {
  const check = { code: input.code, message: input.message, checkedAt: new Date().toISOString() };
  const written = await db.$executeRaw`
    UPDATE issue_recovery_actions
    SET evidence = evidence || jsonb_build_object('harnessCheck', ${JSON.stringify(check)}::jsonb), updated_at = now()
    WHERE id = ${input.actionId}::uuid AND cause = ${OWNER_UNVERIFIED_CAUSE}
      AND status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL} AND NOT (evidence ? 'attestation')
      AND (evidence -> 'harnessCheck' ->> 'code') IS DISTINCT FROM ${input.code}`;
  return written === 1;
}
