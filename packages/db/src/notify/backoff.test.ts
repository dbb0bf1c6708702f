import { describe, expect, it } from "vitest";
import { reconnectDelayMs } from "./backoff";

describe("reconnectDelayMs", () => {
  it("doubles from the initial delay up to the cap, with jitter in [base/2, base]", () => {
    const options = { initialMs: 100, maxMs: 1_000 };
    expect(
      [0, 1, 2, 3, 4, 10].map((attempt) => reconnectDelayMs(attempt, options, () => 1)),
    ).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect([0, 1, 2, 3, 4].map((attempt) => reconnectDelayMs(attempt, options, () => 0))).toEqual([
      50, 100, 200, 400, 500,
    ]);
  });

  it("never exceeds the cap for huge or odd attempt numbers", () => {
    for (const attempt of [1e6, Number.MAX_SAFE_INTEGER, -3, 2.7]) {
      const delay = reconnectDelayMs(attempt, { initialMs: 250, maxMs: 10_000 }, Math.random);
      expect(delay).toBeGreaterThanOrEqual(125);
      expect(delay).toBeLessThanOrEqual(10_000);
    }
  });

  it("rejects a cap below the initial delay", () => {
    expect(() => reconnectDelayMs(0, { initialMs: 500, maxMs: 100 })).toThrow(RangeError);
    expect(() => reconnectDelayMs(0, { initialMs: 0 })).toThrow(RangeError);
  });
});
