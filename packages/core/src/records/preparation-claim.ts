// The recovery claim of a workspace preparation (R-FO-4). A dispatcher that prepares a sandbox
// records, on its `workspace_prepare` operation, a claim: a random token, the controller holding
// it, and an expiry the holder renews while it works. The claim says who may settle the
// preparation if it fails: only that exact live claim. The holder's own failure handler settles
// it with its token (the operation failed, the claim cleared, the sandbox pinned and the
// file-recovery obligation opened, in one transaction: recovery/file-recovery.ts). A recovery
// that finds the holder gone (the orphan sweep) takes the claim over in its own transaction; the
// old holder's late handler then holds another owner's claim, or a stale one, and settles
// nothing: no cleanup, no lease release.
//
// Stored in the operation's metadata (`recoveryClaim`), parsed with zod; a malformed claim grants
// nothing (it reads as missing, and a missing claim settles nothing).
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { ProcessIdentity } from "../process/process-identity";
import { processIdentityRecord } from "./process-identity-record";
import type { DbOrTx } from "./run-log";

export const PREPARATION_CLAIM_SCHEMA = "copyback.preparation-recovery-claim.v1";
export const PREPARATION_CLAIM_KEY = "recoveryClaim";
/** How long a claim lives without renewal; the holder renews it at a third of that. */
export const PREPARATION_CLAIM_MS = 15 * 60_000;

export const preparationClaim = z.object({
  schema: z.literal(PREPARATION_CLAIM_SCHEMA),
  token: z.uuid(),
  /** The controller that holds it (null: a caller without a recorded identity, e.g. a test). */
  holder: processIdentityRecord.nullable(),
  claimedAt: z.iso.datetime({ offset: true }),
  expiresAt: z.iso.datetime({ offset: true }),
});
export type PreparationClaim = z.infer<typeof preparationClaim>;

export function newPreparationClaim(by: ProcessIdentity | null, now: Date, ttlMs = PREPARATION_CLAIM_MS): PreparationClaim {
  return {
    schema: PREPARATION_CLAIM_SCHEMA,
    token: randomUUID(),
    holder: by ? { pid: by.pid, startTime: by.startTime, bootId: by.bootId, host: by.host } : null,
    claimedAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + ttlMs).toISOString(),
  };
}

/** The claim in an operation's metadata, or null (absent or malformed: it grants nothing). */
export function readPreparationClaim(metadata: unknown): PreparationClaim | null {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return null;
  const parsed = preparationClaim.safeParse((metadata as Record<string, unknown>)[PREPARATION_CLAIM_KEY]);
  return parsed.success ? parsed.data : null;
}

/** Extends the holder's claim (only while it is still exactly this token on a running operation). */
export async function renewPreparationClaim(db: DbOrTx, operationId: string, token: string, ttlMs = PREPARATION_CLAIM_MS): Promise<boolean> {
  const expiresAt = new Date(Date.now() + ttlMs).toISOString();
  const updated = await db.$executeRaw`
    UPDATE workspace_operations
       SET metadata = jsonb_set(metadata, ARRAY[${PREPARATION_CLAIM_KEY}::text, 'expiresAt'], to_jsonb(${expiresAt}::text))
     WHERE id = ${operationId}::uuid AND status = 'running'
       AND metadata -> ${PREPARATION_CLAIM_KEY} ->> 'token' = ${token}`;
  return updated === 1;
}

/** The operation under its row lock (the settler's and the taker's view). */
export async function lockPreparation(tx: DbOrTx, operationId: string): Promise<{ id: string; status: string; claim: PreparationClaim | null } | null> {
  const rows = await tx.$queryRaw<{ id: string; status: string; metadata: unknown }[]>`
    SELECT id, status::text AS status, metadata FROM workspace_operations
     WHERE id = ${operationId}::uuid AND phase = 'workspace_prepare' FOR UPDATE`;
  const row = rows[0];
  return row ? { id: row.id, status: row.status, claim: readPreparationClaim(row.metadata) } : null;
}

/** The run's preparations still `running`, under their row locks (the orphan sweep's takeover). */
export async function lockRunningPreparations(tx: DbOrTx, runId: string): Promise<{ id: string; claim: PreparationClaim | null }[]> {
  const rows = await tx.$queryRaw<{ id: string; metadata: unknown }[]>`
    SELECT id, metadata FROM workspace_operations
     WHERE run_id = ${runId}::uuid AND phase = 'workspace_prepare' AND status = 'running'
     ORDER BY created_at, id FOR UPDATE`;
  return rows.map((row) => ({ id: row.id, claim: readPreparationClaim(row.metadata) }));
}

/**
 * Closes a preparation as failed and clears its claim (kept as `settledClaim` for the record), in
 * the caller's transaction; the caller checked the claim under the row lock first.
 */
export async function settlePreparation(tx: DbOrTx, operationId: string, input: { errorCode: string; settledBy: string }): Promise<boolean> {
  const settled = JSON.stringify({ by: input.settledBy, at: new Date().toISOString() });
  const updated = await tx.$executeRaw`
    UPDATE workspace_operations
       SET status = 'failed', error_code = ${input.errorCode}, finished_at = now(),
           metadata = (metadata - ${PREPARATION_CLAIM_KEY}) || jsonb_build_object('settledClaim',
             COALESCE(metadata -> ${PREPARATION_CLAIM_KEY}, '{}'::jsonb) || ${settled}::jsonb)
     WHERE id = ${operationId}::uuid AND status = 'running'`;
  return updated === 1;
}
