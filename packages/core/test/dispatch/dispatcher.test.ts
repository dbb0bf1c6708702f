// The dispatcher's concurrency bound and drain, with an injected claim and executor (no database).
import { describe, expect, it } from "vitest";
import { Dispatcher } from "../../src/dispatch/dispatcher";
import type { ClaimedRunRef } from "../../src/dispatch/claimed-run";

function queue(count: number) {
  const runs: ClaimedRunRef[] = Array.from({ length: count }, (_, i) => ({
    runId: `run-${i}`,
    companyId: "c",
    issueId: `issue-${i}`,
    agentId: "a",
  }));
  const limits: number[] = [];
  return {
    limits,
    remaining: () => runs.length,
    claim: async (limit: number) => {
      limits.push(limit);
      return runs.splice(0, limit);
    },
  };
}

/** An executor whose runs finish only when the test says so. */
function gatedExecutor() {
  const gates = new Map<string, () => void>();
  const signals = new Map<string, AbortSignal>();
  let running = 0;
  let maxRunning = 0;
  return {
    gates,
    signals,
    maxRunning: () => maxRunning,
    running: () => running,
    execute: (run: ClaimedRunRef, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        running += 1;
        maxRunning = Math.max(maxRunning, running);
        signals.set(run.runId, signal);
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          running -= 1;
          resolve();
        };
        gates.set(run.runId, finish);
        signal.addEventListener("abort", finish, { once: true });
      }),
  };
}

const never = new AbortController().signal;
const tick = () => new Promise((r) => setTimeout(r, 0));

describe("Dispatcher", () => {
  it("claims no more than the free slots and never runs more than the concurrency", async () => {
    const q = queue(10);
    const exec = gatedExecutor();
    const dispatcher = new Dispatcher({ concurrency: 3, claim: q.claim, execute: exec.execute });

    expect(await dispatcher.pass(never)).toEqual({ busy: true, claimed: 3 });
    // Full: the next pass does not even ask the database.
    expect(await dispatcher.pass(never)).toEqual({ busy: false, claimed: 0 });
    expect(q.limits).toEqual([3]);
    expect(dispatcher.inFlight).toEqual(["run-0", "run-1", "run-2"]);

    exec.gates.get("run-1")?.();
    await tick();
    expect(await dispatcher.pass(never)).toEqual({ busy: true, claimed: 1 });
    expect(q.limits).toEqual([3, 1]);
    expect(exec.maxRunning()).toBe(3);
    expect(q.remaining()).toBe(6);
  });

  it("is not busy when the queue is empty", async () => {
    const q = queue(0);
    const dispatcher = new Dispatcher({ concurrency: 2, claim: q.claim, execute: gatedExecutor().execute });
    expect(await dispatcher.pass(never)).toEqual({ busy: false, claimed: 0 });
    expect(q.limits).toEqual([2]);
  });

  it("tells the worker when a slot frees", async () => {
    const q = queue(1);
    const exec = gatedExecutor();
    let freed = 0;
    const dispatcher = new Dispatcher({ concurrency: 1, claim: q.claim, execute: exec.execute, onSlotFreed: () => (freed += 1) });
    await dispatcher.pass(never);
    expect(freed).toBe(0);
    exec.gates.get("run-0")?.();
    await tick();
    expect(freed).toBe(1);
    expect(dispatcher.inFlight).toEqual([]);
  });

  it("contains an executor that throws: the slot frees and the error is logged", async () => {
    const q = queue(2);
    const errors: unknown[] = [];
    const dispatcher = new Dispatcher({
      concurrency: 1,
      claim: q.claim,
      execute: () => Promise.reject(new Error("bug")),
      log: { info: () => undefined, warn: () => undefined, error: (fields) => errors.push(fields) },
    });
    await dispatcher.pass(never);
    await tick();
    await tick();
    expect(dispatcher.inFlight).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(await dispatcher.pass(never)).toEqual({ busy: true, claimed: 1 });
  });

  it("a pass whose signal is aborted claims nothing", async () => {
    const q = queue(3);
    const dispatcher = new Dispatcher({ concurrency: 2, claim: q.claim, execute: gatedExecutor().execute });
    const stopped = new AbortController();
    stopped.abort();
    expect(await dispatcher.pass(stopped.signal)).toEqual({ busy: false, claimed: 0 });
    expect(q.limits).toEqual([]);
  });

  it("drain stops claiming and waits for the runs in flight to finish on their own", async () => {
    const q = queue(5);
    const exec = gatedExecutor();
    const dispatcher = new Dispatcher({ concurrency: 2, claim: q.claim, execute: exec.execute });
    await dispatcher.pass(never);
    const drained = dispatcher.drain(5_000);
    expect(dispatcher.draining).toBe(true);
    expect(await dispatcher.pass(never)).toEqual({ busy: false, claimed: 0 });
    exec.gates.get("run-0")?.();
    exec.gates.get("run-1")?.();
    expect(await drained).toEqual({ settled: 2, aborted: 0, abandoned: 0 });
    expect(exec.signals.get("run-0")?.aborted).toBe(false);
    expect(q.limits).toEqual([2]);
  });

  it("drain aborts the runs still in flight at the deadline", async () => {
    const q = queue(2);
    const exec = gatedExecutor();
    const dispatcher = new Dispatcher({ concurrency: 2, claim: q.claim, execute: exec.execute });
    await dispatcher.pass(never);
    exec.gates.get("run-0")?.();
    const result = await dispatcher.drain(20);
    expect(result).toEqual({ settled: 1, aborted: 1, abandoned: 0 });
    expect(exec.signals.get("run-1")?.aborted).toBe(true);
    expect(exec.running()).toBe(0);
  });

  it("drain with nothing in flight returns at once", async () => {
    const dispatcher = new Dispatcher({ concurrency: 1, claim: queue(0).claim, execute: gatedExecutor().execute });
    expect(await dispatcher.drain(60_000)).toEqual({ settled: 0, aborted: 0, abandoned: 0 });
  });

  it("refuses a concurrency that is not a positive integer", () => {
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      expect(() => new Dispatcher({ concurrency, claim: queue(0).claim, execute: gatedExecutor().execute })).toThrow(RangeError);
    }
  });
});
