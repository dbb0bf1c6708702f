// The cleanup claim the export-only retry holds on its lease while it resumes the sandbox
// (R-EX-5): taken with the stop-only intent at admission (leases/stop-intent.ts), given back here
// by leases/transition-lease.ts giveBackCleanupClaim, which compares the holder (this retry's
// claim), so a claim the cleanup sweep took over after this one expired is never cleared.
import type { TransactionClient } from "@copyback/db/client";
import { CLEANUP_CLAIM_MS } from "../../leases/lease-cleanup";
import { giveBackCleanupClaim, type LeaseDb } from "../../leases/transition-lease";

/** Who holds the lease's cleanup claim while this retry resumes it (R-EX-5). */
export const exportRetryClaimOf = (actionId: string) => ({ by: `export-retry:${actionId}`, forMs: CLEANUP_CLAIM_MS });

/**
 * On re-admission: the retry's claim is given back, and the cleanup sweep's next look is put off by
 * a claim's length: the run's own release after its commit stops (or destroys) the sandbox by the
 * intent, and a restarted controller's sweep still finds it if that never happens (R-EX-5).
 */
export async function giveBackClaimAtReadmission(tx: TransactionClient, input: { leaseId: string; actionId: string }): Promise<void> {
  await giveBackCleanupClaim(tx, { leaseId: input.leaseId, by: exportRetryClaimOf(input.actionId).by, putOffSweepMs: CLEANUP_CLAIM_MS });
}

/** On a failed retry: the retry's own claim is given back so the stop by the same intent can take it. */
export async function giveBackClaimAfterFailure(db: LeaseDb, input: { leaseId: string; actionId: string }): Promise<void> {
  await giveBackCleanupClaim(db, { leaseId: input.leaseId, by: exportRetryClaimOf(input.actionId).by });
}
