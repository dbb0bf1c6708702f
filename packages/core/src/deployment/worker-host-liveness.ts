// Issue 23 part 1 (host affinity), pure: when a host counts as having a live worker, and what a
// run bound to a host without one says. The worker heartbeats its worker_hosts row every
// WORKER_HEARTBEAT_INTERVAL_MS (deployment/worker-hosts.ts); both the heartbeat and the reader take
// the time from the database's clock, so the hosts' own clocks never enter.
//
// The bound: a worker is live while its row was seen within WORKER_STALE_AFTER_MS, 4.5 heartbeats.
// One or two missed beats (a slow database round trip, a long GC pause, a busy event loop during a
// large copyback) must not flip a healthy host to "waiting"; a killed worker must show as gone
// within a minute. 45 s does both: it tolerates three missed beats and a late fourth.
//
// Two questions, two answers from the same rows:
//   - a queued run needs a worker that still claims: its host is *serving* while it has a live row
//     that is not draining (a worker stopping gracefully marks its row draining and claims no more);
//   - a running run (status running; that includes a run whose result was accepted and whose
//     finalization has not settled: the console still shows it "Working") needs its own worker, or
//     another of that host, to be there: its host is *alive* while it has any live row, draining
//     included (a draining worker is finishing that very run). When no row is live the run says its
//     worker stopped; only that host's reconciler may recover it, once a worker of it is back.

/** How often each worker writes its worker_hosts row. */
export const WORKER_HEARTBEAT_INTERVAL_MS = 10_000;
/** A worker whose row was last seen longer ago than this is not live. */
export const WORKER_STALE_AFTER_MS = 45_000;
/** Rows stale for this long are deleted by any worker's heartbeat (a killed worker never deletes its own). */
export const WORKER_ROW_RETENTION_MS = 24 * 60 * 60 * 1000;

/** The stable codes of the reason, in the REST payload and the console. */
export const WAITING_FOR_HOST_CODE = "waiting_for_host";
export const HOST_WORKER_GONE_CODE = "host_worker_gone";
export type HostWaitCode = typeof WAITING_FOR_HOST_CODE | typeof HOST_WORKER_GONE_CODE;

export interface HostWait {
  code: HostWaitCode;
  /** The host the run's workspace is bound to (a Copyback host id, not a machine's host name). */
  hostId: string;
  message: string;
}

/**
 * The newest heartbeats of one host's worker_hosts rows: of any row (`seenAt`) and of the rows not
 * draining (`servingSeenAt`); null when there is no such row.
 */
export interface HostBeats {
  seenAt: Date | null;
  servingSeenAt: Date | null;
}

/** The run statuses a host wait is about; every other run waits for nothing. */
export type HostBoundRunStatus = "queued" | "running";

/** Live exactly when seen within the bound (a row seen "in the future" by a few ms is live too). */
export function workerLive(lastSeenAt: Date, now: Date, staleAfterMs: number = WORKER_STALE_AFTER_MS): boolean {
  return now.getTime() - lastSeenAt.getTime() <= staleAfterMs;
}

/** A live row that is not draining: a worker of the host still claims its queued runs. */
export function hostServing(beats: HostBeats | undefined, now: Date): boolean {
  return beats?.servingSeenAt != null && workerLive(beats.servingSeenAt, now);
}

/** Any live row, draining included: a worker of the host is there for its running runs. */
export function hostAlive(beats: HostBeats | undefined, now: Date): boolean {
  return beats?.seenAt != null && workerLive(beats.seenAt, now);
}

/**
 * What a run bound to `boundHost` says about its host, or null: a queued run waits for its host
 * when that host is not serving; a running run's worker is gone when its host is not alive. An
 * unbound workspace is claimed by any host, so its runs wait for none. `beats`: per host id
 * (absent: never seen or pruned).
 */
export function hostWaitOf(
  run: { status: string; boundHost: string | null },
  beats: ReadonlyMap<string, HostBeats>,
  now: Date,
): HostWait | null {
  const { status, boundHost } = run;
  if (boundHost === null) return null;
  const host = beats.get(boundHost);
  if (status === "queued") {
    return hostServing(host, now) ? null : { code: WAITING_FOR_HOST_CODE, hostId: boundHost, message: waitingForHostMessage(boundHost) };
  }
  if (status === "running") {
    return hostAlive(host, now) ? null : { code: HOST_WORKER_GONE_CODE, hostId: boundHost, message: hostWorkerGoneMessage(boundHost) };
  }
  return null;
}

export function waitingForHostMessage(hostId: string): string {
  return `Waiting for the worker on ${hostId}`;
}

export function hostWorkerGoneMessage(hostId: string): string {
  return `The worker on ${hostId} stopped during this run`;
}
