// The waiting machinery: backoff policy, the per-process FIFO, and the cross-process ticket queue.
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jittered, nextDelay, sleep, turnPollDelay } from "../../src/copyback/locks/backoff";
import { ensureLockRoot } from "../../src/copyback/locks/lock-paths";
import { FifoAbortedError, FifoTimeoutError, ProcessFifo } from "../../src/copyback/locks/process-fifo";
import { BUSY, WaiterQueue, isTicketLive } from "../../src/copyback/locks/waiter-queue";
import { tempDir } from "./helpers";

describe("backoff (pure)", () => {
  it("grows by the factor up to the cap and never below the start", () => {
    const policy = { initialMs: 10, maxMs: 100, factor: 2 };
    const delays = [10];
    for (let i = 0; i < 6; i += 1) delays.push(nextDelay(delays.at(-1)!, policy));
    expect(delays).toEqual([10, 20, 40, 80, 100, 100, 100]);
    expect(nextDelay(0, policy)).toBe(10);
  });

  it("the next in line polls by an eighth of its wait there, from 1 ms up to the cap", () => {
    const policy = { initialMs: 10, maxMs: 100, factor: 2 };
    expect(turnPollDelay(0, policy)).toBe(1);
    expect(turnPollDelay(4, policy)).toBe(1);
    expect(turnPollDelay(80, policy)).toBe(10);
    expect(turnPollDelay(400, policy)).toBe(50);
    expect(turnPollDelay(60_000, policy)).toBe(100);
  });

  it("jitter stays within [d/2, d]", () => {
    expect(jittered(100, () => 0)).toBe(50);
    expect(jittered(100, () => 1)).toBe(100);
    expect(jittered(100, () => 0.5)).toBe(75);
  });

  it("sleep is abortable and rejects with the signal's reason", async () => {
    const controller = new AbortController();
    const slept = sleep(10_000, controller.signal);
    controller.abort(new Error("enough"));
    await expect(slept).rejects.toThrow("enough");
  });
});

describe("per-process FIFO", () => {
  it("admits in arrival order, times out and aborts waiters without disturbing the line", async () => {
    const fifo = new ProcessFifo();
    const order: string[] = [];
    const first = await fifo.enter("k", 1_000);
    const second = fifo.enter("k", 1_000).then((leave) => (order.push("second"), leave));
    const timedOut = fifo.enter("k", 20);
    const controller = new AbortController();
    const aborted = fifo.enter("k", 1_000, controller.signal);
    const third = fifo.enter("k", 1_000).then((leave) => (order.push("third"), leave));
    expect(fifo.size("k")).toBe(5);
    await expect(timedOut).rejects.toBeInstanceOf(FifoTimeoutError);
    controller.abort("stop");
    await expect(aborted).rejects.toBeInstanceOf(FifoAbortedError);
    expect(fifo.size("k")).toBe(3);
    expect(order).toEqual([]);
    first();
    first(); // leaving twice is harmless
    (await second)();
    (await third)();
    expect(order).toEqual(["second", "third"]);
    expect(fifo.size("k")).toBe(0);
    // other keys are independent
    const other = await fifo.enter("other", 0);
    other();
  });
});

describe("ticket queue (fairness only)", () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let file: string;
  const policy = { heartbeatMs: 100, staleMs: 1_000 };
  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir("queue"));
    file = path.join(ensureLockRoot(dir), `${"c".repeat(64)}.queue.sqlite`);
  });
  afterEach(() => cleanup());

  it("liveness is a window around now: stale in the past, and stale in the 'future' after a clock step", () => {
    expect(isTicketLive(1_000, 1_500, 1_000)).toBe(true);
    expect(isTicketLive(1_000, 2_001, 1_000)).toBe(false);
    expect(isTicketLive(5_000, 1_000, 1_000)).toBe(false);
  });

  it("only the oldest live ticket is at the front; stale tickets are skipped; removal advances the line", () => {
    const a = WaiterQueue.open(file, "q", policy);
    const b = WaiterQueue.open(file, "q", policy);
    const t0 = 1_000_000;
    const first = a.enqueue(111, t0);
    const second = b.enqueue(222, t0 + 10);
    if (first === BUSY || second === BUSY) throw new Error("busy in a single-threaded test");
    expect(second).toBeGreaterThan(first);
    expect(a.liveAhead(first, t0 + 20)).toBe(0);
    expect(b.liveAhead(second, t0 + 20)).toBe(1);
    expect(b.liveAhead(null, t0 + 20)).toBe(2); // a newcomer without a ticket waits behind both

    // the first waiter freezes: after the stale limit the second is at the front
    expect(b.heartbeat(second, t0 + 1_500)).toBe(true);
    expect(b.liveAhead(second, t0 + 1_500)).toBe(0);
    // it comes back: it is the oldest again
    expect(a.heartbeat(first, t0 + 1_600)).toBe(true);
    expect(b.liveAhead(second, t0 + 1_600)).toBe(1);

    expect(a.remove(first)).toBe(true);
    expect(b.liveAhead(second, t0 + 1_600)).toBe(0);
    expect(a.heartbeat(first, t0 + 1_700)).toBe(false); // gone: its owner must queue again
  });

  it("garbage-collects long-dead tickets when someone enqueues", () => {
    const q = WaiterQueue.open(file, "q", policy);
    const dead = q.enqueue(1, 0);
    const alive = q.enqueue(2, 10_000_000);
    if (dead === BUSY || alive === BUSY) throw new Error("busy in a single-threaded test");
    expect(q.heartbeat(dead, 10_000_000)).toBe(false);
  });
});
