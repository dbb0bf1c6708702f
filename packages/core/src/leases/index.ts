// Environment leases: acquisition by policy, release by policy, the status
// machine with compare-and-set transitions and the versioned metadata documents.
export { acquireLease } from "./acquire-lease";
export { releaseLeaseByPolicy, continueLeaseCleanup, stopAndRetain, judgeStopReceipt, CLEANUP_CLAIM_MS, type StopReceiptVerdict } from "./release-lease";
export { leaseHeldSql } from "./lease-holds";
export type { LeaseCleanupOptions, CleanupClaim } from "./lease-cleanup";
export { destroyLeaseSandbox, newDestroyIntent, type DestroyLeaseOptions } from "./destroy-lease";
export { decideLeaseRelease, type ReleaseDecision, type RunEndForLease } from "./release-policy";
export { decideAcquireRetry, decideCleanupRetry, decideDestroyRetry, ACQUIRE_ATTEMPTS, CLEANUP_BACKOFF_MS, CLEANUP_DEFER_MS, DESTROY_ATTEMPTS, DESTROY_BACKOFF_MS, type ProviderRetryDecision } from "./provider-retry-policy";
export { canTransition, forbiddenTransitions, isTerminal } from "./lease-status";
export { transitionLease, patchLease, claimPendingCleanup, recordCleanupAttempt, deferCleanup, type LeaseDb, type LeaseMetadataPatch, type TransitionLeaseInput } from "./transition-lease";
export { pluginForLease, type PluginLookup } from "./plugin-for-lease";
export * from "./lease-metadata";
export * from "./lease-types";
