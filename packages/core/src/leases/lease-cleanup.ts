// Pieces shared by the two cleanup paths of a lease (stop-and-retain in release-lease.ts, destroy
// in destroy-lease.ts): the cleanup claim an in-flight request holds, the options the live
// release and the cleanup sweep pass (one implementation, two callers), the pending outcome, and
// the provider handle of the exact allocation.
import type { LeaseHandle } from "../providers/types";
import type { LeaseReleaseOutcome, LeaseRow, PendingCleanupCode } from "./lease-types";

/** R-EX-5: an in-flight stop request holds the lease's cleanup claim this long (a crash delays the sweep until it expires). */
export const CLEANUP_CLAIM_MS = 15 * 60_000;

export interface CleanupClaim {
  by: string;
  forMs: number;
}

/** How a caller continues a lease's cleanup: the run's own release (defaults) or the cleanup sweep. */
export interface LeaseCleanupOptions {
  /** Who holds the cleanup claim while the provider request is in flight (default: the lease's run, releaseClaimOf). */
  claim?: CleanupClaim;
  /**
   * A takeover by the cleanup sweep: the claim of a pending lease is taken only while its next
   * cleanup is due, so two sweeps that selected it at once do not both spend an attempt.
   */
  takeover?: boolean;
  /**
   * Resolve a destroy intent whose allocation the provider never named (a lost acquire reply) by
   * acquiring again with the lease id (idempotent per lease id) and destroying what comes back.
   * The sweep does; a live release leaves it to the sweep.
   */
  resolveUnnamedAllocation?: boolean;
  /** The destroy backoff's sleep (tests pass one that returns at once). */
  sleep?: (ms: number) => Promise<unknown>;
}

/** The claim a release by the lease's run takes while its provider request is in flight. */
export function releaseClaimOf(lease: LeaseRow): CleanupClaim {
  return { by: `release:${lease.runId ?? "none"}`, forMs: CLEANUP_CLAIM_MS };
}

export function claimOf(lease: LeaseRow, options: LeaseCleanupOptions): CleanupClaim {
  return options.claim ?? releaseClaimOf(lease);
}

export function pendingOutcome(leaseId: string, code: PendingCleanupCode, message: string): LeaseReleaseOutcome {
  return { kind: "pending_cleanup", leaseId, code, message };
}

export function handleOf(lease: LeaseRow, providerLeaseId: string): LeaseHandle {
  return { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId };
}
