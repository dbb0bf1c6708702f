// Issue 23 part 1 (host affinity): this worker's worker_hosts row, written at start and every
// WORKER_HEARTBEAT_INTERVAL_MS, so the console, the API and the metrics can tell a run bound to a
// host whose workers are all gone ("Waiting for the worker on HOST", or for a running run "The
// worker on HOST stopped during this run") from one that is just queued or working.
// One beat at a time (a slow database never stacks them up); a failed beat is logged and the next
// one tries again: the row goes stale only when beats stop for WORKER_STALE_AFTER_MS.
// A graceful stop has two steps: drain() when the claim loop has stopped marks the row draining at
// once (this worker claims no more, so its host's queued runs wait for another worker of it) and
// the beats go on while the runs in flight finish (they are not "stopped during this run");
// stop() once they have finished deletes the row.
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "@copyback/db";
import { beatWorkerHost, removeWorkerHost, WORKER_HEARTBEAT_INTERVAL_MS } from "@copyback/core/deployment";

export interface HostHeartbeat {
  readonly workerId: string;
  /** No more claims: the row says draining from this beat on; it keeps beating. */
  drain(): Promise<void>;
  /** Drained: the beats stop and the row is deleted. */
  stop(): Promise<void>;
}

export async function startHostHeartbeat(opts: {
  db: PrismaClient;
  hostId: string;
  intervalMs?: number;
  log: { warn(obj: object, msg: string): void };
}): Promise<HostHeartbeat> {
  const worker = { id: randomUUID(), hostId: opts.hostId, pid: process.pid };
  const intervalMs = opts.intervalMs ?? WORKER_HEARTBEAT_INTERVAL_MS;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let draining = false;
  let inFlight: Promise<void> = Promise.resolve();
  const beat = async () => {
    try {
      await beatWorkerHost(opts.db, worker, { draining });
    } catch (error) {
      opts.log.warn({ err: error, hostId: worker.hostId }, "worker host heartbeat failed; the next one tries again");
    }
  };
  // Every beat queues behind the one before, so stop() awaits the last of them all.
  const enqueue = () => (inFlight = inFlight.then(beat));
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      void enqueue().then(schedule);
    }, intervalMs);
    // The heartbeat never keeps a stopping process alive.
    timer.unref();
  };
  // The first beat is awaited: once the worker is live, its host counts as served.
  await enqueue();
  schedule();
  return {
    workerId: worker.id,
    async drain() {
      if (draining || stopped) return;
      draining = true;
      // One beat now, after the one in flight; the schedule goes on as before.
      await enqueue();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
      await removeWorkerHost(opts.db, worker.id).catch((error: unknown) => opts.log.warn({ err: error }, "could not remove this worker's worker_hosts row; it goes stale"));
    },
  };
}
