import { describe, expect, it } from "vitest";
import { decideRetry, DEFAULT_BACKOFF, isRetryableStatus, parseRetryAfter, type BackoffPolicy } from "./backoff";

const policy: BackoffPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000, maxRetryAfterMs: 30_000 };
const now = Date.parse("2026-12-07T03:00:00Z");

describe("Daytona backoff policy", () => {
  it("retries 429 and 5xx (not 501), nothing else", () => {
    expect([429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true);
    expect([undefined, 400, 401, 403, 404, 409, 501].some(isRetryableStatus)).toBe(false);
    expect(decideRetry({ attempt: 1, status: 409, nowMs: now }, policy, () => 0)).toEqual({ kind: "give_up", reason: "not_retryable" });
    expect(decideRetry({ attempt: 1, status: undefined, nowMs: now }, policy, () => 0)).toEqual({ kind: "give_up", reason: "not_retryable" });
  });

  it("grows the jitter ceiling exponentially up to the cap", () => {
    const top = () => 0.999999;
    const delays = [1, 2, 3, 4, 5, 6].map((attempt) => decideRetry({ attempt, status: 503, nowMs: now }, { ...policy, maxAttempts: 10 }, top));
    expect(delays.map((d) => (d.kind === "retry" ? d.delayMs : -1))).toEqual([99, 199, 399, 799, 999, 999]);
    expect(decideRetry({ attempt: 3, status: 503, nowMs: now }, policy, () => 0)).toEqual({ kind: "retry", delayMs: 0 });
  });

  it("is bounded: gives up after maxAttempts calls", () => {
    expect(decideRetry({ attempt: 3, status: 429, nowMs: now }, policy, () => 0.5).kind).toBe("retry");
    expect(decideRetry({ attempt: 4, status: 429, nowMs: now }, policy, () => 0.5)).toEqual({ kind: "give_up", reason: "attempts_exhausted" });
  });

  it("honours Retry-After in seconds as the least wait, with a little jitter", () => {
    expect(decideRetry({ attempt: 1, status: 429, retryAfter: "7", nowMs: now }, policy, () => 0)).toEqual({ kind: "retry", delayMs: 7_000 });
    expect(decideRetry({ attempt: 1, status: 429, retryAfter: "7", nowMs: now }, policy, () => 0.5)).toEqual({ kind: "retry", delayMs: 7_050 });
  });

  it("honours Retry-After as an HTTP date", () => {
    const at = new Date(now + 5_000).toUTCString();
    expect(parseRetryAfter(at, now)).toBe(5_000);
    expect(parseRetryAfter(new Date(now - 5_000).toUTCString(), now)).toBe(0);
    expect(decideRetry({ attempt: 1, status: 503, retryAfter: at, nowMs: now }, policy, () => 0)).toEqual({ kind: "retry", delayMs: 5_000 });
  });

  it("ignores an unusable Retry-After and gives up on one longer than the policy waits", () => {
    expect(parseRetryAfter("soon-ish 12", now)).toBeNull();
    expect(parseRetryAfter("-3", now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(decideRetry({ attempt: 1, status: 429, retryAfter: "-3", nowMs: now }, policy, () => 0)).toEqual({ kind: "retry", delayMs: 0 });
    expect(decideRetry({ attempt: 1, status: 429, retryAfter: "31", nowMs: now }, policy, () => 0)).toEqual({ kind: "give_up", reason: "retry_after_too_long" });
  });

  it("has sane defaults", () => {
    expect(DEFAULT_BACKOFF.maxAttempts).toBeGreaterThan(1);
    expect(DEFAULT_BACKOFF.maxRetryAfterMs).toBeGreaterThanOrEqual(DEFAULT_BACKOFF.maxDelayMs);
  });
});
