// The launcher's worker restart policy (scripts/launch/restart-policy.ts; scripts have no vitest
// project of their own, like the test runner's summary in test-reports.test.ts).
import { describe, expect, it } from "vitest";
import { decideWorkerRestart, MAX_CRASHES, RESTART_WINDOW_MS } from "../../../scripts/launch/restart-policy";

const T = 1_800_000_000_000;

describe("decideWorkerRestart", () => {
  it("restarts after a first crash within a second, then backs off 2, 4, 8, 16 s", () => {
    const delays: number[] = [];
    const crashes: number[] = [];
    for (let i = 0; i < MAX_CRASHES; i++) {
      crashes.push(T + i * 1_000);
      const decision = decideWorkerRestart(crashes, T + i * 1_000);
      expect(decision.kind).toBe("restart");
      if (decision.kind === "restart") delays.push(decision.delayMs);
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
  });

  it("gives up after more than MAX_CRASHES crashes within the window", () => {
    const crashes = Array.from({ length: MAX_CRASHES + 1 }, (_, i) => T + i * 1_000);
    expect(decideWorkerRestart(crashes, T + MAX_CRASHES * 1_000)).toEqual({ kind: "give_up", crashesInWindow: MAX_CRASHES + 1 });
  });

  it("forgets crashes older than the window: a worker that crashes once a day is always restarted quickly", () => {
    const daily = Array.from({ length: 30 }, (_, i) => T + i * 86_400_000);
    expect(decideWorkerRestart(daily, daily.at(-1)!)).toEqual({ kind: "restart", delayMs: 1_000, crashesInWindow: 1 });
    const old = [T, T + 1, T + 2, T + 3, T + 4, T + 5];
    expect(decideWorkerRestart([...old, T + RESTART_WINDOW_MS + 10], T + RESTART_WINDOW_MS + 10)).toMatchObject({ kind: "restart", crashesInWindow: 1 });
  });
});
