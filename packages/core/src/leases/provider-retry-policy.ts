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

/** Asked only after a failure: anything but a positive count is the caller's bug. */
function checkFailedAttempts(failedAttempts: number): void {
  if (!Number.isSafeInteger(failedAttempts) || failedAttempts < 1) {
    throw invalid("retry_attempts_invalid", `A retry decision needs the number of failed attempts (a positive integer), not ${failedAttempts}.`);
  }
}
