// Issue 23 part 1 (host affinity): this worker's worker_hosts row, written at start and every
// WORKER_HEARTBEAT_INTERVAL_MS, so the console, the API and the metric can tell a run bound to a
// host whose workers are all gone ("Waiting for the worker on HOST") from one that is just queued.
// One beat at a time (a slow database never stacks them up); a failed beat is logged and the next
// one tries again: the row goes stale only when beats stop for WORKER_STALE_AFTER_MS. stop() is
// called when the claim loop has stopped, and deletes the row at once.
import { randomUUID } from "node:crypto";
import type { PrismaClient } from "@copyback/db";
import { beatWorkerHost, removeWorkerHost, WORKER_HEARTBEAT_INTERVAL_MS } from "@copyback/core/deployment";

export interface HostHeartbeat {
  readonly workerId: string;
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
  let inFlight: Promise<void> = Promise.resolve();
  const beat = async () => {
    try {
      await beatWorkerHost(opts.db, worker);
    } catch (error) {
      opts.log.warn({ err: error, hostId: worker.hostId }, "worker host heartbeat failed; the next one tries again");
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      inFlight = beat().then(schedule);
    }, intervalMs);
    // The heartbeat never keeps a stopping process alive.
    timer.unref();
  };
  // The first beat is awaited: once the worker is live, its host counts as served.
  inFlight = beat();
  await inFlight;
  schedule();
  return {
    workerId: worker.id,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
      await removeWorkerHost(opts.db, worker.id).catch((error: unknown) => opts.log.warn({ err: error }, "could not remove this worker's worker_hosts row; it goes stale"));
    },
  };
}
