import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/errors";
import { ACQUIRE_ATTEMPTS, decideAcquireRetry, decideDestroyRetry, DESTROY_ATTEMPTS, DESTROY_BACKOFF_MS } from "../../src/leases/index";

const lost = new DomainError("unavailable", "provider_reply_lost", "lost");

describe("decideAcquireRetry", () => {
  it("repeats a transient failure once (a lost reply, an unavailable provider, a transport error), then gives up", () => {
    expect(ACQUIRE_ATTEMPTS).toBe(2);
    expect(decideAcquireRetry(1, lost)).toEqual({ kind: "retry", delayMs: 0 });
    expect(decideAcquireRetry(1, new Error("ECONNRESET"))).toEqual({ kind: "retry", delayMs: 0 });
    expect(decideAcquireRetry(2, lost)).toEqual({ kind: "give_up" });
  });

  it("does not repeat a refusal that would repeat (invalid configuration, a conflicting sandbox, an unusable allocation)", () => {
    for (const error of [
      new DomainError("invalid", "provider_config_invalid", "bad"),
      new DomainError("conflict", "provider_identity_mismatch", "foreign"),
      new DomainError("invalid", "provider_allocation_invalid", "no identity"),
    ]) {
      expect(decideAcquireRetry(1, error)).toEqual({ kind: "give_up" });
    }
  });

  it("refuses a count that is not a positive integer", () => {
    for (const n of [0, -1, 1.5, Number.NaN]) expect(() => decideAcquireRetry(n, lost)).toThrow(expect.objectContaining({ code: "retry_attempts_invalid" }));
  });
});

describe("decideDestroyRetry", () => {
  it("repeats a failed destroy with a short, growing backoff up to three tries", () => {
    expect(DESTROY_ATTEMPTS).toBe(3);
    expect(decideDestroyRetry(1)).toEqual({ kind: "retry", delayMs: DESTROY_BACKOFF_MS[0] });
    expect(decideDestroyRetry(2)).toEqual({ kind: "retry", delayMs: DESTROY_BACKOFF_MS[1] });
    expect(DESTROY_BACKOFF_MS[0]).toBeLessThan(DESTROY_BACKOFF_MS[1]);
    expect(decideDestroyRetry(3)).toEqual({ kind: "give_up" });
  });

  it("refuses a count that is not a positive integer", () => {
    for (const n of [0, -2, 2.5]) expect(() => decideDestroyRetry(n)).toThrow(expect.objectContaining({ code: "retry_attempts_invalid" }));
  });
});
