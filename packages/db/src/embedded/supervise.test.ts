// The restart backoff of the supervised embedded server, and its one line.
import { describe, expect, it } from "vitest";
import { DEFAULT_RESTART_BACKOFF, describeExit, restartDelayMs } from "./supervise";

describe("restarting a dead embedded PostgreSQL", () => {
  it("waits 250 ms, then doubles up to 30 s", () => {
    expect([1, 2, 3, 4, 5, 8, 9, 50, 1000].map((n) => restartDelayMs(n))).toEqual([250, 500, 1000, 2000, 4000, 30_000, 30_000, 30_000, 30_000]);
    expect(restartDelayMs(1, { ...DEFAULT_RESTART_BACKOFF, initialMs: 10, maxMs: 35 })).toBe(10);
    expect(restartDelayMs(3, { ...DEFAULT_RESTART_BACKOFF, initialMs: 10, maxMs: 35 })).toBe(35);
  });

  it("refuses an attempt number that is not a positive integer", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => restartDelayMs(bad)).toThrow(RangeError);
  });

  it("says how the postmaster ended", () => {
    expect(describeExit({ code: null, signal: "SIGKILL" })).toBe("killed by SIGKILL");
    expect(describeExit({ code: 1, signal: null })).toBe("exit code 1");
    expect(describeExit({ code: null, signal: null })).toBe("exit code ?");
  });
});
