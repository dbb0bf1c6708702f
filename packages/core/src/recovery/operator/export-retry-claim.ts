// The cleanup claim the export-only retry holds on its lease while it resumes the sandbox
// (R-EX-5): taken with the stop-only intent at admission (leases/stop-intent.ts), given back here.
// Both give-backs compare the holder (cleanup_claimed_by = this retry's claim), so a claim the
// cleanup sweep took over after this one expired is never cleared. leases/transition-lease.ts has
// no compare-and-set on the holder: its patchLease would clear whoever holds the claim and rewrite
// the metadata, and its deferCleanup also takes a free claim and schedules by CLEANUP_DEFER_MS;
// so these two statements stay as they are.
import { Prisma, type TransactionClient } from "@copyback/db/client";
import { CLEANUP_CLAIM_MS } from "../../leases/lease-cleanup";
import type { LeaseDb } from "../../leases/transition-lease";

/** Who holds the lease's cleanup claim while this retry resumes it (R-EX-5). */
export const exportRetryClaimOf = (actionId: string) => ({ by: `export-retry:${actionId}`, forMs: CLEANUP_CLAIM_MS });

/**
 * On re-admission: the retry's claim is given back, and the cleanup sweep's next look is put off by
 * a claim's length: the run's own release after its commit stops (or destroys) the sandbox by the
 * intent, and a restarted controller's sweep still finds it if that never happens (R-EX-5).
 */
export async function giveBackClaimAtReadmission(tx: TransactionClient, input: { leaseId: string; actionId: string }): Promise<void> {
  await tx.$executeRaw`
    UPDATE environment_leases
    SET cleanup_claimed_by = NULL, cleanup_claimed_until = NULL,
        next_cleanup_at = now() + ${CLEANUP_CLAIM_MS}::double precision * interval '1 millisecond', updated_at = now()
    WHERE id = ${input.leaseId}::uuid AND status = 'pending_cleanup'::lease_status AND cleanup_claimed_by = ${exportRetryClaimOf(input.actionId).by}`;
}

/** On a failed retry: the retry's own claim is given back so the stop by the same intent can take it. */
export async function giveBackClaimAfterFailure(db: LeaseDb, input: { leaseId: string; actionId: string }): Promise<void> {
  await db.$executeRaw(Prisma.sql`
    UPDATE environment_leases SET cleanup_claimed_by = NULL, cleanup_claimed_until = NULL, updated_at = now()
    WHERE id = ${input.leaseId}::uuid AND status = 'pending_cleanup'::lease_status AND cleanup_claimed_by = ${exportRetryClaimOf(input.actionId).by}`);
}
