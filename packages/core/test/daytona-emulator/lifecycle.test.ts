import { describe, expect, it } from "vitest";
import { manualClock } from "../support/daytona/clock";
import { faultPlan } from "../support/daytona/faults";
import { transition, toolboxAvailable } from "../support/daytona/state-machine";
import { MINUTE_MS, nextDueEvent, type TimerRecord } from "../support/daytona/timers";

describe("Daytona emulator state machine", () => {
  it("moves through Daytona's transitional states", () => {
    expect(transition("started", "stop")).toEqual({ kind: "move", transitional: "stopping", settled: "stopped" });
    expect(transition("stopped", "archive")).toEqual({ kind: "move", transitional: "archiving", settled: "archived" });
    expect(transition("archived", "start")).toEqual({ kind: "move", transitional: "starting", settled: "started" });
    expect(transition("stopped", "delete")).toEqual({ kind: "move", transitional: "destroying", settled: "destroyed" });
    expect(transition("started", "start")).toEqual({ kind: "noop" });
  });

  it("answers an illegal transition with 400 and one in flight with 409", () => {
    expect(transition("started", "archive")).toMatchObject({ kind: "illegal", status: 400 });
    expect(transition("archived", "stop")).toMatchObject({ kind: "illegal", status: 400 });
    expect(transition("stopping", "start")).toMatchObject({ kind: "illegal", status: 409 });
    expect(transition("destroyed", "start")).toMatchObject({ kind: "illegal", status: 400 });
  });

  it("serves the toolbox only while started", () => {
    expect(toolboxAvailable("started")).toBe(true);
    for (const state of ["stopped", "archived", "stopping", "starting", "error"] as const) expect(toolboxAvailable(state)).toBe(false);
  });
});

describe("Daytona emulator timers", () => {
  const base: TimerRecord = { state: "started", autoStopInterval: 15, autoArchiveInterval: 60, autoDeleteInterval: -1, lastActivityAtMs: 0, stoppedAtMs: null };

  it("auto-stops after the idle interval, not before; 0 disables auto-stop", () => {
    expect(nextDueEvent(base, 15 * MINUTE_MS - 1)).toBeNull();
    expect(nextDueEvent(base, 15 * MINUTE_MS)).toEqual({ action: "stop", atMs: 15 * MINUTE_MS });
    expect(nextDueEvent({ ...base, autoStopInterval: 0 }, 10_000 * MINUTE_MS)).toBeNull();
  });

  it("auto-archives a stopped sandbox; 0 means the 30-day maximum", () => {
    const stopped: TimerRecord = { ...base, state: "stopped", stoppedAtMs: 0 };
    expect(nextDueEvent(stopped, 60 * MINUTE_MS)).toEqual({ action: "archive", atMs: 60 * MINUTE_MS });
    expect(nextDueEvent({ ...stopped, autoArchiveInterval: 0 }, 60 * MINUTE_MS)).toBeNull();
    expect(nextDueEvent({ ...stopped, autoArchiveInterval: 0 }, 30 * 24 * 60 * MINUTE_MS)?.action).toBe("archive");
  });

  it("auto-deletes only when enabled (-1 disabled, 0 at once on stop), archived sandboxes too", () => {
    const stopped: TimerRecord = { ...base, state: "stopped", stoppedAtMs: 0 };
    expect(nextDueEvent({ ...stopped, autoDeleteInterval: 0 }, 0)).toEqual({ action: "delete", atMs: 0 });
    expect(nextDueEvent({ ...stopped, state: "archived", autoDeleteInterval: 90 }, 90 * MINUTE_MS)?.action).toBe("delete");
    expect(nextDueEvent({ ...stopped, state: "archived" }, 1e12)).toBeNull();
  });
});

describe("Daytona emulator clock and faults", () => {
  it("refuses a negative advance and a malformed fault", () => {
    const clock = manualClock(0);
    expect(() => clock.advance(-1)).toThrow(/non-negative/);
    expect(clock.now()).toBe(0);
    const faults = faultPlan();
    expect(() => faults.once({ op: "get", kind: "status", status: 200 })).toThrow(/4xx/);
    expect(faults.pending()).toEqual([]);
  });

  it("consumes a fault once, scoped by operation and sandbox", () => {
    const faults = faultPlan();
    faults.once({ op: "stop", kind: "lost_reply", sandboxId: "a" });
    expect(faults.take("stop", "b")).toBeUndefined();
    expect(faults.take("get", "a")).toBeUndefined();
    expect(faults.take("stop", "a")).toMatchObject({ kind: "lost_reply" });
    expect(faults.take("stop", "a")).toBeUndefined();
  });
});
