// Issue 23 part 1 (host affinity): the worker_hosts record. Each worker process heartbeats its own
// row (beatWorkerHost) and deletes it when it stops claiming (removeWorkerHost); the readers
// answer which queued runs wait for a host that has no live worker (worker-host-liveness.ts
// decides, from the database's clock). One reader serves the run and task payloads (API, console)
// and the metric, so they never disagree about who waits.
import { Prisma, type PrismaClient } from "@copyback/db/client";
import { hostWaitOf, WORKER_ROW_RETENTION_MS, type HostWait } from "./worker-host-liveness";

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
 * worker of any host prunes them, a few rows at most).
 */
export async function beatWorkerHost(db: Writer, worker: WorkerHostRow): Promise<void> {
  await db.$executeRaw`
    INSERT INTO worker_hosts (id, host_id, pid, started_at, last_seen_at) VALUES (${worker.id}::uuid, ${worker.hostId}, ${worker.pid}, now(), now())
    ON CONFLICT (id) DO UPDATE SET last_seen_at = now()`;
  await db.$executeRaw`DELETE FROM worker_hosts WHERE last_seen_at < now() - make_interval(secs => ${WORKER_ROW_RETENTION_MS / 1000})`;
}

/** A worker that stops claiming takes its row away at once (its host may have no live worker left). */
export async function removeWorkerHost(db: Writer, workerId: string): Promise<void> {
  await db.$executeRaw`DELETE FROM worker_hosts WHERE id = ${workerId}::uuid`;
}

/** The newest heartbeat of each of `hostIds` (hosts never seen are absent) and the database's now. */
async function readLastSeen(db: Reader, hostIds: readonly string[]): Promise<{ lastSeen: Map<string, Date>; now: Date }> {
  if (hostIds.length === 0) return { lastSeen: new Map(), now: new Date() };
  const rows = await db.$queryRaw<{ host_id: string | null; last_seen_at: Date | null; now: Date }[]>`
    SELECT h.host_id, h.last_seen_at, now() AS now FROM (SELECT 1) one
    LEFT JOIN (SELECT host_id, max(last_seen_at) AS last_seen_at FROM worker_hosts WHERE host_id = ANY(${[...hostIds]}::text[]) GROUP BY host_id) h ON TRUE`;
  const lastSeen = new Map<string, Date>();
  for (const row of rows) if (row.host_id !== null && row.last_seen_at !== null) lastSeen.set(row.host_id, row.last_seen_at);
  return { lastSeen, now: rows[0]?.now ?? new Date() };
}

/** Queued runs and the host their task's workspace is bound to (unbound ones are left out). */
const queuedBoundRunsSql = (where: Prisma.Sql) => Prisma.sql`
  FROM heartbeat_runs r JOIN issues i ON i.id = r.native_issue_id JOIN execution_workspaces w ON w.id = i.execution_workspace_id
  WHERE r.status = 'queued' AND w.host_id IS NOT NULL AND ${where}`;

/** The runs of `runIds` that are queued and wait for their workspace's host (absent: not waiting). */
export async function readRunHostWaits(db: Reader, runIds: readonly string[]): Promise<Map<string, HostWait>> {
  const waits = new Map<string, HostWait>();
  if (runIds.length === 0) return waits;
  const rows = await db.$queryRaw<{ id: string; host_id: string }[]>`
    SELECT r.id::text AS id, w.host_id ${queuedBoundRunsSql(Prisma.sql`r.id = ANY(${[...runIds]}::uuid[])`)}`;
  const { lastSeen, now } = await readLastSeen(db, [...new Set(rows.map((row) => row.host_id))]);
  for (const row of rows) {
    const wait = hostWaitOf(row.host_id, lastSeen, now);
    if (wait) waits.set(row.id, wait);
  }
  return waits;
}

/** One run's wait, or null (the REST run payload and the console's current run). */
export async function readRunHostWait(db: Reader, runId: string): Promise<HostWait | null> {
  return (await readRunHostWaits(db, [runId])).get(runId) ?? null;
}

/** How many queued runs wait for each host that has no live worker (the metric). */
export async function countRunsWaitingPerHost(db: Reader): Promise<{ hostId: string; count: number }[]> {
  const rows = await db.$queryRaw<{ host_id: string; count: number }[]>`
    SELECT w.host_id, count(*)::int AS count ${queuedBoundRunsSql(Prisma.sql`TRUE`)} GROUP BY w.host_id`;
  const { lastSeen, now } = await readLastSeen(db, rows.map((row) => row.host_id));
  return rows.filter((row) => hostWaitOf(row.host_id, lastSeen, now) !== null).map((row) => ({ hostId: row.host_id, count: row.count }));
}
