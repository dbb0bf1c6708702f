import { describe, expect, it } from "vitest";
import { WORKER_HEARTBEAT_INTERVAL_MS, WORKER_STALE_AFTER_MS, hostWaitOf, workerLive } from "./worker-host-liveness";

const now = new Date("2026-12-07T12:00:00.000Z");
const ago = (ms: number) => new Date(now.getTime() - ms);

describe("worker host liveness (issue 23: a run bound to a host without a live worker waits for it)", () => {
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

  it("host affinity: a run of an unbound workspace or of a live host waits for nothing; of a stale or unknown host it waits for that host", () => {
    const seen = new Map([
      ["host-a", ago(1_000)],
      ["host-b", ago(WORKER_STALE_AFTER_MS + 1_000)],
    ]);
    expect(hostWaitOf(null, seen, now)).toBeNull();
    expect(hostWaitOf("host-a", seen, now)).toBeNull();
    expect(hostWaitOf("host-b", seen, now)).toEqual({ code: "waiting_for_host", hostId: "host-b", message: "Waiting for the worker on host-b" });
    expect(hostWaitOf("host-c", seen, now)).toEqual({ code: "waiting_for_host", hostId: "host-c", message: "Waiting for the worker on host-c" });
  });
});
