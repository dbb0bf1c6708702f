// Pieces shared by the two cleanup paths of a lease (stop-and-retain in release-lease.ts, destroy
// in destroy-lease.ts): the cleanup claim an in-flight request holds, the pending outcome, and
// the provider handle of the exact allocation.
import type { LeaseHandle } from "../providers/types";
import type { LeaseReleaseOutcome, LeaseRow, PendingCleanupCode } from "./lease-types";

/** R-EX-5: an in-flight stop request holds the lease's cleanup claim this long (a crash delays the sweep until it expires). */
export const CLEANUP_CLAIM_MS = 15 * 60_000;

/** The claim a release by the lease's run takes while its provider request is in flight. */
export function releaseClaimOf(lease: LeaseRow): { by: string; forMs: number } {
  return { by: `release:${lease.runId ?? "none"}`, forMs: CLEANUP_CLAIM_MS };
}

export function pendingOutcome(leaseId: string, code: PendingCleanupCode, message: string): LeaseReleaseOutcome {
  return { kind: "pending_cleanup", leaseId, code, message };
}

export function handleOf(lease: LeaseRow, providerLeaseId: string): LeaseHandle {
  return { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId };
}
