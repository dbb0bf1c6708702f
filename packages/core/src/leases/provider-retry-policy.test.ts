// R-EX-5, R-SO-1: how often the lease services repeat a provider call whose answer they did not
// get. Beside test/leases/provider-retry-policy.test.ts: the exact limits and the refusal text.
import { describe, expect, it } from "vitest";
import { DomainError } from "../errors";
import {
  ACQUIRE_ATTEMPTS,
  CLEANUP_BACKOFF_MS,
  CLEANUP_DEFER_MS,
  decideAcquireRetry,
  decideCleanupRetry,
  decideDestroyRetry,
  DESTROY_ATTEMPTS,
  DESTROY_BACKOFF_MS,
} from "./provider-retry-policy";

describe("provider retry policy", () => {
  it("R-EX-5: acquire is tried twice and destroy three times, 50 ms then 200 ms apart", () => {
    expect(ACQUIRE_ATTEMPTS).toBe(2);
    expect(DESTROY_BACKOFF_MS).toEqual([50, 200]);
    expect(DESTROY_ATTEMPTS).toBe(3);
    expect([1, 2, 3, 4].map(decideDestroyRetry)).toEqual([
      { kind: "retry", delayMs: 50 },
      { kind: "retry", delayMs: 200 },
      { kind: "give_up" },
      { kind: "give_up" },
    ]);
  });

  it("R-EX-5: only an unavailable provider (or a failure that is no domain error) is repeated", () => {
    expect(
      decideAcquireRetry(1, new DomainError("unavailable", "provider_unavailable", "down")),
    ).toEqual({ kind: "retry", delayMs: 0 });
    expect(decideAcquireRetry(1, "socket hang up")).toEqual({ kind: "retry", delayMs: 0 });
    for (const kind of ["invalid", "conflict", "not_found", "forbidden"] as const) {
      expect(decideAcquireRetry(1, new DomainError(kind, "provider_refused", "no"))).toEqual({
        kind: "give_up",
      });
    }
    // Never a third try, transient or not.
    expect(decideAcquireRetry(2, new Error("ECONNRESET"))).toEqual({ kind: "give_up" });
    expect(decideAcquireRetry(3, new Error("ECONNRESET"))).toEqual({ kind: "give_up" });
  });

  it("R-EX-5: a count that is not a positive integer is the caller's bug, named in the refusal", () => {
    for (const [n, text] of [
      [0, "not 0."],
      [-1, "not -1."],
      [1.5, "not 1.5."],
      [Number.NaN, "not NaN."],
      [Number.MAX_SAFE_INTEGER + 1, "not 9007199254740992."],
    ] as const) {
      const error = (() => {
        try {
          decideDestroyRetry(n);
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({
        kind: "invalid",
        code: "retry_attempts_invalid",
        message: `A retry decision needs the number of failed attempts (a positive integer), ${text}`,
      });
      expect(() => decideAcquireRetry(n, new Error("x"))).toThrow(`, ${text}`);
    }
  });

  it("R-EX-5 R-RR-3: the cleanup backoff grows from 30 s to an hour and never gives up; a deferral waits 5 minutes", () => {
    expect(CLEANUP_BACKOFF_MS).toEqual([30_000, 60_000, 120_000, 300_000, 900_000, 1_800_000, 3_600_000]);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 100].map((n) => decideCleanupRetry(n).delayMs)).toEqual([
      30_000, 60_000, 120_000, 300_000, 900_000, 1_800_000, 3_600_000, 3_600_000, 3_600_000,
    ]);
    expect(decideCleanupRetry(1).kind).toBe("retry");
    expect(CLEANUP_DEFER_MS).toBe(300_000);
    expect(() => decideCleanupRetry(0)).toThrow("not 0.");
  });
});
