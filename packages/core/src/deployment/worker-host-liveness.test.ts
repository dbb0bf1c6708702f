import { describe, expect, it } from "vitest";
import { WORKER_HEARTBEAT_INTERVAL_MS, WORKER_STALE_AFTER_MS, hostAlive, hostServing, hostWaitOf, workerLive, type HostBeats } from "./worker-host-liveness";

const now = new Date("2026-12-07T12:00:00.000Z");
const ago = (ms: number) => new Date(now.getTime() - ms);
const stale = ago(WORKER_STALE_AFTER_MS + 1_000);

// One host per case: live (a serving row), stale (its rows all too old), draining (its only live
// row is draining), draining-then-killed (the draining row went stale too), none (never seen).
const beats = new Map<string, HostBeats>([
  ["live", { seenAt: ago(1_000), servingSeenAt: ago(1_000) }],
  ["stale", { seenAt: stale, servingSeenAt: stale }],
  ["draining", { seenAt: ago(1_000), servingSeenAt: null }],
  // An older worker of the host went stale, a newer one drains: still not serving.
  ["draining-old-stale", { seenAt: ago(1_000), servingSeenAt: stale }],
  ["draining-killed", { seenAt: stale, servingSeenAt: null }],
]);
const queued = (host: string | null) => hostWaitOf({ status: "queued", boundHost: host }, beats, now);
const running = (host: string | null) => hostWaitOf({ status: "running", boundHost: host }, beats, now);
const waits = (host: string) => ({ code: "waiting_for_host", hostId: host, message: `Waiting for the worker on ${host}` });
const gone = (host: string) => ({ code: "host_worker_gone", hostId: host, message: `The worker on ${host} stopped during this run` });

describe("worker host liveness (issue 23: a run bound to a host without a live worker says so)", () => {
  it("host affinity: a worker is live up to the bound and stale just after it", () => {
    expect(workerLive(ago(0), now)).toBe(true);
    expect(workerLive(ago(WORKER_STALE_AFTER_MS), now)).toBe(true);
    expect(workerLive(ago(WORKER_STALE_AFTER_MS + 1), now)).toBe(false);
    // A heartbeat written a moment "after" the reader's now (another connection's clock read) is live.
    expect(workerLive(new Date(now.getTime() + 5), now)).toBe(true);
  });

  it("host affinity: the bound tolerates three missed heartbeats, and not five", () => {
    expect(workerLive(ago(WORKER_HEARTBEAT_INTERVAL_MS * 4), now)).toBe(true);
    expect(workerLive(ago(WORKER_HEARTBEAT_INTERVAL_MS * 5), now)).toBe(false);
  });

  it("host affinity: serving needs a live row that is not draining; alive needs any live row (live, stale, draining, none)", () => {
    const table = ["live", "stale", "draining", "draining-old-stale", "draining-killed", "none"].map((host) => [host, hostServing(beats.get(host), now), hostAlive(beats.get(host), now)]);
    expect(table).toEqual([
      ["live", true, true],
      ["stale", false, false],
      ["draining", false, true],
      ["draining-old-stale", false, true],
      ["draining-killed", false, false],
      ["none", false, false],
    ]);
  });

  it("host affinity: a queued run waits for its host unless that host is serving (a draining host claims no more)", () => {
    expect(queued(null)).toBeNull();
    expect(queued("live")).toBeNull();
    expect(queued("stale")).toEqual(waits("stale"));
    expect(queued("draining")).toEqual(waits("draining"));
    expect(queued("draining-old-stale")).toEqual(waits("draining-old-stale"));
    expect(queued("draining-killed")).toEqual(waits("draining-killed"));
    expect(queued("none")).toEqual(waits("none"));
  });

  it("host affinity: a running run's worker is gone only when its host has no live row at all (a draining worker is finishing it)", () => {
    expect(running(null)).toBeNull();
    expect(running("live")).toBeNull();
    expect(running("draining")).toBeNull();
    expect(running("draining-old-stale")).toBeNull();
    expect(running("stale")).toEqual(gone("stale"));
    expect(running("draining-killed")).toEqual(gone("draining-killed"));
    expect(running("none")).toEqual(gone("none"));
  });

  it("host affinity: a settled run says nothing about its host, whatever the host's state", () => {
    for (const status of ["succeeded", "failed", "cancelled", "timed_out"]) {
      for (const host of ["live", "stale", "draining", "none"]) expect(hostWaitOf({ status, boundHost: host }, beats, now)).toBeNull();
    }
  });
});
