// When to call Daytona again after a refusal (pure: no clock, no sleep, randomness passed in).
// Rate limits (429) and server errors (5xx but 501) are retried a bounded number of times with
// full-jitter exponential backoff; a Retry-After from Daytona is honoured as the least wait,
// plus a little jitter so a fleet of controllers does not come back in one wave. A Retry-After
// longer than the policy accepts gives up at once: the caller's own retry (the cleanup sweep,
// the export retry) comes back later instead of holding locks that long. Anything else (4xx, a
// transport error without a status) is never retried here: it is not known to be harmless.

export interface BackoffPolicy {
  /** Calls in all, the first one included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest Retry-After waited for. */
  maxRetryAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { maxAttempts: 5, baseDelayMs: 250, maxDelayMs: 8_000, maxRetryAfterMs: 60_000 };

export interface FailedAttempt {
  /** 1 for the first call. */
  attempt: number;
  /** The HTTP status of the refusal, undefined when there was none. */
  status: number | undefined;
  /** The Retry-After header as sent. */
  retryAfter?: string | undefined;
  nowMs: number;
}

export type RetryDecision =
  | { kind: "retry"; delayMs: number }
  | { kind: "give_up"; reason: "not_retryable" | "attempts_exhausted" | "retry_after_too_long" };

export function isRetryableStatus(status: number | undefined): boolean {
  return status === 429 || (status !== undefined && status >= 500 && status <= 599 && status !== 501);
}

/** Milliseconds from a Retry-After value (delta-seconds or an HTTP date), or null when unusable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // RFC 9110's IMF-fixdate only ("Sun, 06 Nov 1994 08:49:37 GMT"): Date.parse accepts far more.
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - nowMs);
}

/** `random` returns a number in [0, 1). */
export function decideRetry(failed: FailedAttempt, policy: BackoffPolicy, random: () => number): RetryDecision {
  if (!isRetryableStatus(failed.status)) return { kind: "give_up", reason: "not_retryable" };
  if (failed.attempt >= policy.maxAttempts) return { kind: "give_up", reason: "attempts_exhausted" };
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failed.attempt - 1));
  const jittered = Math.floor(random() * ceiling);
  const retryAfterMs = parseRetryAfter(failed.retryAfter, failed.nowMs);
  if (retryAfterMs === null) return { kind: "retry", delayMs: jittered };
  if (retryAfterMs > policy.maxRetryAfterMs) return { kind: "give_up", reason: "retry_after_too_long" };
  return { kind: "retry", delayMs: retryAfterMs + Math.floor(random() * policy.baseDelayMs) };
}
