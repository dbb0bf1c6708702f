// Issue 23 part 1 (host affinity), pure: when a host counts as having a live worker, and what a
// queued run bound to a host without one waits for. The worker heartbeats its worker_hosts row
// every WORKER_HEARTBEAT_INTERVAL_MS (deployment/worker-hosts.ts); both the heartbeat and the
// reader take the time from the database's clock, so the hosts' own clocks never enter.
//
// The bound: a worker is live while its row was seen within WORKER_STALE_AFTER_MS, 4.5 heartbeats.
// One or two missed beats (a slow database round trip, a long GC pause, a busy event loop during a
// large copyback) must not flip a healthy host to "waiting"; a killed worker must show as gone
// within a minute. 45 s does both: it tolerates three missed beats and a late fourth.

/** How often each worker writes its worker_hosts row. */
export const WORKER_HEARTBEAT_INTERVAL_MS = 10_000;
/** A worker whose row was last seen longer ago than this is not live. */
export const WORKER_STALE_AFTER_MS = 45_000;
/** Rows stale for this long are deleted by any worker's heartbeat (a killed worker never deletes its own). */
export const WORKER_ROW_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The stable code of the reason, in the REST payload and the console. */
export const WAITING_FOR_HOST_CODE = "waiting_for_host";

export interface HostWait {
  code: typeof WAITING_FOR_HOST_CODE;
  /** The host the run's workspace is bound to (a Copyback host id, not a machine's host name). */
  hostId: string;
  message: string;
}

/** Live exactly when seen within the bound (a row seen "in the future" by a few ms is live too). */
export function workerLive(lastSeenAt: Date, now: Date, staleAfterMs: number = WORKER_STALE_AFTER_MS): boolean {
  return now.getTime() - lastSeenAt.getTime() <= staleAfterMs;
}

/**
 * What a queued run waits for: its workspace's host when that host has no live worker, else
 * nothing (an unbound workspace is claimed by any host; a live host's worker claims it itself).
 * `lastSeen`: the newest heartbeat of each host's workers (absent: never seen or pruned).
 */
export function hostWaitOf(boundHost: string | null, lastSeen: ReadonlyMap<string, Date>, now: Date): HostWait | null {
  if (boundHost === null) return null;
  const seen = lastSeen.get(boundHost);
  if (seen !== undefined && workerLive(seen, now)) return null;
  return { code: WAITING_FOR_HOST_CODE, hostId: boundHost, message: waitingForHostMessage(boundHost) };
}

export function waitingForHostMessage(hostId: string): string {
  return `Waiting for the worker on ${hostId}`;
}
