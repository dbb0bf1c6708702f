import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createRefreshBatcher, type RefreshBatch } from "./refresh-batcher";

describe("createRefreshBatcher", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("coalesces a burst into one refresh after the window", () => {
    const batches: RefreshBatch[] = [];
    const batcher = createRefreshBatcher({
      flush: (b) => batches.push(b),
      windowMs: 200,
      minIntervalMs: 1_000,
    });
    batcher.add(["issues"]);
    batcher.add(["runs", "issues"]);
    vi.advanceTimersByTime(199);
    expect(batches).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(batches.map((b) => [...b.routers].sort())).toEqual([["issues", "runs"]]);
  });

  it("spaces refreshes at least minIntervalMs apart under a steady stream", () => {
    const flushedAt: number[] = [];
    const batcher = createRefreshBatcher({
      flush: () => flushedAt.push(Date.now()),
      windowMs: 200,
      minIntervalMs: 1_000,
    });
    const start = Date.now();
    for (let t = 0; t < 3_000; t += 50) {
      batcher.add(["runs"]);
      vi.advanceTimersByTime(50);
    }
    vi.advanceTimersByTime(1_000);
    const gaps = flushedAt.slice(1).map((t, i) => t - (flushedAt[i] ?? 0));
    expect(flushedAt[0]! - start).toBe(200);
    expect(gaps.every((gap) => gap >= 1_000)).toBe(true);
    expect(flushedAt.length).toBeGreaterThanOrEqual(3);
  });

  it("turns a resync into one refresh of everything, and cancel drops what is pending", () => {
    const batches: RefreshBatch[] = [];
    const batcher = createRefreshBatcher({ flush: (b) => batches.push(b) });
    batcher.add(["issues"]);
    batcher.everything();
    vi.runAllTimers();
    expect(batches).toEqual([{ routers: new Set(), everything: true }]);
    batcher.add(["issues"]);
    batcher.cancel();
    vi.runAllTimers();
    expect(batches).toHaveLength(1);
  });

  it("ignores a change that maps to no query", () => {
    const batches: RefreshBatch[] = [];
    const batcher = createRefreshBatcher({ flush: (b) => batches.push(b) });
    batcher.add([]);
    vi.runAllTimers();
    expect(batches).toEqual([]);
  });
});
