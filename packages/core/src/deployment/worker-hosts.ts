// Issue 23 part 1 (host affinity): the worker_hosts record. Each worker process heartbeats its own
// row (beatWorkerHost); a graceful stop marks it draining (a beat with `draining`: no new claims,
// the beats go on while its runs finish) and deletes it once drained (removeWorkerHost). The
// readers answer which queued runs wait for a host that is not serving and which running runs'
// host has no live worker at all (worker-host-liveness.ts decides both, from the database's clock).
// One reader serves the run and task payloads (API, console) and the metrics, so they never
// disagree about who waits.
import { Prisma, type PrismaClient } from "@copyback/db/client";
import { hostAlive, hostWaitOf, WORKER_ROW_RETENTION_MS, type HostBeats, type HostWait, type HostWaitCode } from "./worker-host-liveness";

type Writer = Pick<PrismaClient, "$executeRaw">;
type Reader = Pick<PrismaClient, "$queryRaw">;

export interface WorkerHostRow {
  /** The worker process's own id, random at its start. */
  id: string;
  hostId: string;
  pid: number;
}

/**
 * One heartbeat: the row is written (created on the first beat) with the database's now(), and
 * rows stale past the retention are deleted (a killed worker never deletes its own; any live
 * worker of any host prunes them, a few rows at most). `draining`: this worker claims no more;
 * the row keeps the first draining_since (a row pruned meanwhile comes back draining).
 */
export async function beatWorkerHost(db: Writer, worker: WorkerHostRow, opts: { draining?: boolean } = {}): Promise<void> {
  const draining = opts.draining === true;
  await db.$executeRaw`
    INSERT INTO worker_hosts (id, host_id, pid, started_at, last_seen_at, draining_since)
    VALUES (${worker.id}::uuid, ${worker.hostId}, ${worker.pid}, now(), now(), CASE WHEN ${draining}::boolean THEN now() END)
    ON CONFLICT (id) DO UPDATE SET last_seen_at = now(), draining_since = COALESCE(worker_hosts.draining_since, EXCLUDED.draining_since)`;
  await db.$executeRaw`DELETE FROM worker_hosts WHERE last_seen_at < now() - make_interval(secs => ${WORKER_ROW_RETENTION_MS / 1000})`;
}

/** A drained worker takes its row away at once (its host may have no live worker left). */
export async function removeWorkerHost(db: Writer, workerId: string): Promise<void> {
  await db.$executeRaw`DELETE FROM worker_hosts WHERE id = ${workerId}::uuid`;
}

/** The newest heartbeats (any row, rows not draining) of each of `hostIds` (hosts never seen are absent) and the database's now. */
async function readHostBeats(db: Reader, hostIds: readonly string[]): Promise<{ beats: Map<string, HostBeats>; now: Date }> {
  if (hostIds.length === 0) return { beats: new Map(), now: new Date() };
  const rows = await db.$queryRaw<{ host_id: string | null; seen_at: Date | null; serving_seen_at: Date | null; now: Date }[]>`
    SELECT h.host_id, h.seen_at, h.serving_seen_at, now() AS now FROM (SELECT 1) one
    LEFT JOIN (
      SELECT host_id, max(last_seen_at) AS seen_at, max(last_seen_at) FILTER (WHERE draining_since IS NULL) AS serving_seen_at
      FROM worker_hosts WHERE host_id = ANY(${[...hostIds]}::text[]) GROUP BY host_id
    ) h ON TRUE`;
  const beats = new Map<string, HostBeats>();
  for (const row of rows) if (row.host_id !== null) beats.set(row.host_id, { seenAt: row.seen_at, servingSeenAt: row.serving_seen_at });
  return { beats, now: rows[0]?.now ?? new Date() };
}

/**
 * Whether some host other than `hostId` has a live worker (hostAlive: any live row, a draining one
 * too: that host is still there, perhaps restarting). The claim asks it before it binds an
 * unbound workspace whose directory it lacks (dispatch/unbound-claim-policy.ts).
 */
export async function otherHostAlive(db: Reader, hostId: string): Promise<boolean> {
  const rows = await db.$queryRaw<{ host_id: string }[]>`SELECT DISTINCT host_id FROM worker_hosts WHERE host_id <> ${hostId}`;
  const { beats, now } = await readHostBeats(db, rows.map((row) => row.host_id));
  return [...beats.values()].some((host) => hostAlive(host, now));
}

/**
 * Queued and running runs and the host their task's workspace is bound to (unbound ones are left
 * out): the one run -> task -> workspace join behind every reader below.
 */
const hostBoundRunsSql = (where: Prisma.Sql) => Prisma.sql`
  FROM heartbeat_runs r JOIN issues i ON i.id = r.native_issue_id JOIN execution_workspaces w ON w.id = i.execution_workspace_id
  WHERE r.status IN ('queued', 'running') AND w.host_id IS NOT NULL AND ${where}`;

/**
 * The runs of `runIds` that say something about their workspace's host: queued ones waiting for
 * it (`waiting_for_host`), running ones whose host has no live worker (`host_worker_gone`).
 * Absent: nothing to say (any other status, unbound, or the host is there).
 */
export async function readRunHostWaits(db: Reader, runIds: readonly string[]): Promise<Map<string, HostWait>> {
  const waits = new Map<string, HostWait>();
  if (runIds.length === 0) return waits;
  const rows = await db.$queryRaw<{ id: string; status: string; host_id: string }[]>`
    SELECT r.id::text AS id, r.status::text AS status, w.host_id ${hostBoundRunsSql(Prisma.sql`r.id = ANY(${[...runIds]}::uuid[])`)}`;
  const { beats, now } = await readHostBeats(db, [...new Set(rows.map((row) => row.host_id))]);
  for (const row of rows) {
    const wait = hostWaitOf({ status: row.status, boundHost: row.host_id }, beats, now);
    if (wait) waits.set(row.id, wait);
  }
  return waits;
}

/** One run's wait, or null (the REST run payload and the console's current run). */
export async function readRunHostWait(db: Reader, runId: string): Promise<HostWait | null> {
  return (await readRunHostWaits(db, [runId])).get(runId) ?? null;
}

/** How many runs say each code about each host (the metrics): only hosts with something to say. */
export async function countRunHostWaitsPerHost(db: Reader): Promise<{ hostId: string; code: HostWaitCode; count: number }[]> {
  const rows = await db.$queryRaw<{ host_id: string; status: string; count: number }[]>`
    SELECT w.host_id, r.status::text AS status, count(*)::int AS count ${hostBoundRunsSql(Prisma.sql`TRUE`)} GROUP BY w.host_id, r.status`;
  const { beats, now } = await readHostBeats(db, [...new Set(rows.map((row) => row.host_id))]);
  const counts: { hostId: string; code: HostWaitCode; count: number }[] = [];
  for (const row of rows) {
    const wait = hostWaitOf({ status: row.status, boundHost: row.host_id }, beats, now);
    if (wait) counts.push({ hostId: row.host_id, code: wait.code, count: row.count });
  }
  return counts;
}

/** How many queued runs wait for each host that is not serving. */
export async function countRunsWaitingPerHost(db: Reader): Promise<{ hostId: string; count: number }[]> {
  return (await countRunHostWaitsPerHost(db)).filter((row) => row.code === "waiting_for_host").map(({ hostId, count }) => ({ hostId, count }));
}
