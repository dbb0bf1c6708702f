// How often the lease services repeat a provider call whose answer they did not get (pure).
// Both calls are idempotent for the same lease (acquire per lease id, destroy per allocation), so a
// repeat after a lost reply is safe; what does not succeed in-process is left to the cleanup sweep
// on a `pending_cleanup` lease with a destroy intent, never dropped.
import { invalid, isDomainError } from "../errors";

export type ProviderRetryDecision = { kind: "retry"; delayMs: number } | { kind: "give_up" };

/** Acquire is tried twice: the first try and one repeat with the same lease id. */
export const ACQUIRE_ATTEMPTS = 2;

/** Destroy is tried three times, waiting this long before the second and the third. */
export const DESTROY_BACKOFF_MS = [50, 200] as const;
export const DESTROY_ATTEMPTS = DESTROY_BACKOFF_MS.length + 1;

/**
 * After `failedAttempts` failed acquires: repeat once when the failure may be transient (a
 * transport error, a lost reply, an unavailable provider). A provider that refused the request
 * (invalid configuration, a conflicting sandbox) or answered with an unusable allocation would
 * answer the same again.
 */
export function decideAcquireRetry(failedAttempts: number, error: unknown): ProviderRetryDecision {
  checkFailedAttempts(failedAttempts);
  if (failedAttempts >= ACQUIRE_ATTEMPTS) return { kind: "give_up" };
  const transient = !isDomainError(error) || error.kind === "unavailable";
  return transient ? { kind: "retry", delayMs: 0 } : { kind: "give_up" };
}

/** After `failedAttempts` failed destroys: repeat with a short backoff up to DESTROY_ATTEMPTS tries. */
export function decideDestroyRetry(failedAttempts: number): ProviderRetryDecision {
  checkFailedAttempts(failedAttempts);
  const delayMs = DESTROY_BACKOFF_MS[failedAttempts - 1];
  return delayMs === undefined ? { kind: "give_up" } : { kind: "retry", delayMs };
}

/**
 * The cleanup backoff (R-EX-5, R-RR-3): after the n-th failed cleanup attempt of a
 * `pending_cleanup` lease (a stop that failed or was not confirmed, a destroy still unconfirmed
 * after its in-process tries), the cleanup sweep tries again this long later. It never gives up:
 * the lease keeps its intent until a provider answer settles it (a stop is never replaced by a
 * release or a destroy, R-SO-1), so the delay only grows to its cap.
 */
export const CLEANUP_BACKOFF_MS = [30_000, 60_000, 2 * 60_000, 5 * 60_000, 15 * 60_000, 30 * 60_000, 60 * 60_000] as const;

/**
 * How long a cleanup that asked nothing of the provider is put off (R-EX-6): the lease's plugin is
 * unavailable or lacks the operation, or the intent does not match the lease. No attempt is spent;
 * the delay only keeps such leases from filling every sweep batch.
 */
export const CLEANUP_DEFER_MS = 5 * 60_000;

/** After `failedAttempts` failed cleanup attempts: when the sweep tries again (never gives up). */
export function decideCleanupRetry(failedAttempts: number): { kind: "retry"; delayMs: number } {
  checkFailedAttempts(failedAttempts);
  const delayMs = CLEANUP_BACKOFF_MS[Math.min(failedAttempts, CLEANUP_BACKOFF_MS.length) - 1]!;
  return { kind: "retry", delayMs };
}

/** Asked only after a failure: anything but a positive count is the caller's bug. */
function checkFailedAttempts(failedAttempts: number): void {
  if (!Number.isSafeInteger(failedAttempts) || failedAttempts < 1) {
    throw invalid("retry_attempts_invalid", `A retry decision needs the number of failed attempts (a positive integer), not ${failedAttempts}.`);
  }
}
