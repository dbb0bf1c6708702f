// The final transaction of a Discard, in one place for both of its finishers:
// the operator's own request (discard-sandbox.ts step 3) and the resumption of an interrupted one
// (resume-discard.ts, run by the lease cleanup sweep). After the pinned plugin's destroy returned:
// the lease `destroyed` with the confirmed destruction receipt of the intent (request, who, why,
// which actions: the evidence reconstruction requires, R-RC-1), each acknowledged action records
// that its files were given up (actions.ts), one activity row. All or nothing, and only for the
// caller that still holds the lease's claim (a compare-and-set on it): of two finishers exactly one
// records; the other gets null and says so.
//
// Also the one writer of a Discard that could not finish: its failure recorded on the lease, its
// claim given back, its next try scheduled (by the cleanup backoff for a provider failure; without
// spending an attempt when nothing was asked of the provider, R-EX-6). The intent stays: the
// operator's decision is kept until a destroy is confirmed.
import { Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { DESTRUCTION_RECEIPT_SCHEMA } from "../leases/destruction-receipt";
import { LEASE_METADATA_KEYS } from "../leases/lease-metadata";
import { CLEANUP_BACKOFF_MS, CLEANUP_DEFER_MS } from "../leases/provider-retry-policy";
import { recordFilesGivenUp } from "../records/actions";
import { recordActivity, type Actor } from "../records/record-activity";
import type { DiscardIntent } from "./discard-intent";

export interface DestructionReceipt {
  schema: typeof DESTRUCTION_RECEIPT_SCHEMA;
  confirmed: true;
  requestId: string;
  pluginId: string;
  providerLeaseId: string;
  destroyedAt: string;
  by: Actor;
  reason: string;
  actionIds: string[];
}

export interface DiscardedLease {
  id: string;
  companyId: string;
  pluginId: string;
  providerLeaseId: string;
}

/**
 * Step 3. Returns the receipt written, or null when `claim` is no longer the lease's (another
 * finisher recorded it, or the lease changed): nothing is written then.
 */
export async function recordDiscard(
  tx: TransactionClient,
  input: { lease: DiscardedLease; intent: DiscardIntent; claim: string; finishedBy: "request" | "reconciler" },
): Promise<DestructionReceipt | null> {
  const { lease, intent } = input;
  const receipt: DestructionReceipt = {
    schema: DESTRUCTION_RECEIPT_SCHEMA,
    confirmed: true,
    requestId: intent.requestId,
    pluginId: lease.pluginId,
    providerLeaseId: lease.providerLeaseId,
    destroyedAt: new Date().toISOString(),
    by: intent.by,
    reason: intent.reason,
    actionIds: intent.actionIds,
  };
  const moved = await tx.$executeRaw`
    UPDATE environment_leases
    SET status = 'destroyed'::lease_status, released_at = COALESCE(released_at, now()),
        metadata = metadata || jsonb_build_object(${LEASE_METADATA_KEYS.destructionReceipt}::text, ${JSON.stringify(receipt)}::jsonb),
        cleanup_claimed_by = NULL, cleanup_claimed_until = NULL, updated_at = now()
    WHERE id = ${lease.id}::uuid AND status IN ('active', 'released', 'pending_cleanup')
      AND cleanup_claimed_by = ${input.claim} AND provider_lease_id = ${lease.providerLeaseId} AND plugin_id = ${lease.pluginId}`;
  if (moved !== 1) return null;
  await recordFilesGivenUp(tx, { actionIds: intent.actionIds, leaseId: lease.id, providerLeaseId: lease.providerLeaseId, by: intent.by, reason: intent.reason, receipt });
  await recordActivity(tx, {
    companyId: lease.companyId,
    actor: intent.by,
    action: "sandbox.discarded",
    entityType: "environment_lease",
    entityId: lease.id,
    details: {
      providerLeaseId: lease.providerLeaseId,
      pluginId: lease.pluginId,
      reason: intent.reason,
      actionIds: intent.actionIds,
      requestId: intent.requestId,
      finishedBy: input.finishedBy,
      ...(intent.resumes ? { resumes: intent.resumes } : {}),
    } as Prisma.InputJsonObject,
  });
  return receipt;
}

/**
 * A Discard (or its resumption) that did not finish: the failure recorded, the claim given back if
 * `claim` still holds it, the next resumption scheduled. `spentAttempt`: the provider was asked
 * (its destroy failed), so the cleanup backoff grows; otherwise (an unavailable plugin, an intent
 * that does not match the lease, an action nobody acknowledged) it is put off CLEANUP_DEFER_MS.
 */
export async function recordDiscardFailure(
  db: Pick<PrismaClient, "$executeRaw"> | TransactionClient,
  input: { leaseId: string; claim: string | null; failure: { code: string; message: string }; spentAttempt: boolean },
): Promise<boolean> {
  const failure = { ...input.failure, at: new Date().toISOString() };
  const backoff = Prisma.sql`(ARRAY[${Prisma.join([...CLEANUP_BACKOFF_MS])}]::double precision[])[least(cleanup_attempts, ${CLEANUP_BACKOFF_MS.length - 1}) + 1]`;
  const delay = input.spentAttempt ? backoff : Prisma.sql`${CLEANUP_DEFER_MS}::double precision`;
  const claimed = input.claim === null ? Prisma.sql`(cleanup_claimed_until IS NULL OR cleanup_claimed_until < now())` : Prisma.sql`cleanup_claimed_by = ${input.claim}`;
  const changed = await db.$executeRaw(Prisma.sql`
    UPDATE environment_leases
    SET metadata = metadata || jsonb_build_object(${LEASE_METADATA_KEYS.failure}::text, ${JSON.stringify(failure)}::jsonb),
        cleanup_attempts = cleanup_attempts + ${input.spentAttempt ? 1 : 0},
        next_cleanup_at = now() + ${delay} * interval '1 millisecond',
        cleanup_claimed_by = NULL, cleanup_claimed_until = NULL, updated_at = now()
    WHERE id = ${input.leaseId}::uuid AND status <> 'destroyed'::lease_status AND ${claimed}`);
  return changed === 1;
}
