import { describe, expect, it } from "vitest";
import { EventEmitter } from "node:events";
import { WorkerLoop } from "../src/loop";
import { abortableSleep } from "../src/abortable-sleep";
import { judgeLiveness } from "../src/liveness";
import { installStopSignals } from "../src/signals";

describe("worker loop", () => {
  it("runs one pass at a time, never overlapping", async () => {
    let running = 0;
    let maxRunning = 0;
    let started = 0;
    // Counted, not timed: a loaded machine may run only a few passes in any fixed window.
    let enough: () => void = () => undefined;
    const fivePasses = new Promise<void>((resolve) => (enough = resolve));
    const loop = new WorkerLoop({
      intervalMs: 1,
      pass: async () => {
        running += 1;
        started += 1;
        if (started === 5) enough();
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 5));
        running -= 1;
        return { busy: true };
      },
    });
    const done = loop.start();
    await fivePasses;
    await loop.stop();
    await done;
    expect(maxRunning).toBe(1);
    expect(loop.status.passes).toBeGreaterThan(2);
    expect(loop.status.state).toBe("stopped");
  });

  it("graceful stop lets the running pass finish and wakes a sleeping loop at once", async () => {
    const finished: number[] = [];
    const loop = new WorkerLoop({
      intervalMs: 60_000,
      pass: async () => {
        await new Promise((r) => setTimeout(r, 30));
        finished.push(Date.now());
        return { busy: false };
      },
    });
    const done = loop.start();
    await new Promise((r) => setTimeout(r, 5));
    const stopAt = Date.now();
    await loop.stop();
    await done;
    expect(finished).toHaveLength(1);
    // The 60 s sleep was cut short by the abort.
    expect(Date.now() - stopAt).toBeLessThan(5_000);
  });

  it("wake() ends the sleep at once, and a wake during a pass skips the next sleep", async () => {
    let passes = 0;
    let loop: WorkerLoop | undefined = undefined;
    loop = new WorkerLoop({
      intervalMs: 60_000,
      pass: async () => {
        passes += 1;
        // The first pass asks for a wake while it runs: it must not be lost.
        if (passes === 1) loop?.wake();
        return { busy: false };
      },
    });
    const done = loop.start();
    await new Promise((r) => setTimeout(r, 20));
    expect(passes).toBe(2); // the second pass ran without the 60 s sleep
    loop.wake();
    await new Promise((r) => setTimeout(r, 20));
    expect(passes).toBe(3);
    await loop.stop();
    await done;
  });

  it("a failing pass is counted and the loop goes on", async () => {
    let calls = 0;
    const errors: unknown[] = [];
    const loop = new WorkerLoop({
      intervalMs: 1,
      pass: async () => {
        calls += 1;
        if (calls === 1) throw new Error("boom");
        return { busy: false };
      },
      onError: (e) => errors.push(e),
    });
    const done = loop.start();
    await new Promise((r) => setTimeout(r, 30));
    await loop.stop();
    await done;
    expect(loop.status.failures).toBe(1);
    expect(calls).toBeGreaterThan(1);
    expect(errors).toHaveLength(1);
  });

  it("abortableSleep resolves early on abort", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const sleeping = abortableSleep(60_000, controller.signal);
    controller.abort();
    await sleeping;
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("judges a loop stale when no pass finished recently", () => {
    const base = { state: "running" as const, passes: 1, failures: 0, lastPassStartedAt: null, lastError: null };
    const now = new Date("2026-01-01T00:01:00Z");
    expect(judgeLiveness({ ...base, lastPassFinishedAt: new Date("2026-01-01T00:00:59Z") }, now, 30_000)).toBe("ok");
    expect(judgeLiveness({ ...base, lastPassFinishedAt: new Date("2026-01-01T00:00:00Z") }, now, 30_000)).toBe("stale");
    expect(judgeLiveness({ ...base, state: "stopping", lastPassFinishedAt: now }, now, 30_000)).toBe("stopping");
  });

  it("first signal is graceful, second is forced", () => {
    const target = new EventEmitter();
    const seen: string[] = [];
    installStopSignals({ target, graceful: () => seen.push("graceful"), forced: () => seen.push("forced") });
    target.emit("SIGTERM", "SIGTERM");
    target.emit("SIGINT", "SIGINT");
    expect(seen).toEqual(["graceful", "forced"]);
  });
});
