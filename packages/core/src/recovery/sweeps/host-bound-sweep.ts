// Issue 23 part 1 (host affinity): the reconciler's sweeps act only on work bound to their own
// host when that work is host-local. A run whose execution workspace is bound to another host
// (finalizing or replaying it would write that host's files through this host's path of the same
// name), or a lease whose sandbox is another host's (a `local` sandbox: its directory and process
// groups are there), is left to its own host. Remote leases (fake, Daytona) and unbound
// workspaces pass: any host may serve them.
//
// The predicates below go INTO each host-bound sweep's due query (its WHERE, before the batch
// bound and the per-company ranking), never after it: a filter applied to an already bounded batch
// lets a window full of another host's due units (a dead host's) starve this host's for as long as
// they stay due. `hostId` undefined: a single-host caller (tests, the bench), no narrowing.
import { Prisma } from "@copyback/db/client";

/** The runs of `runIds` whose workspace is bound to a host other than `hostId` (with that host). */
export function foreignRunsSql(runIds: readonly string[], hostId: string): Prisma.Sql {
  return Prisma.sql`SELECT r.id::text AS id, w.host_id FROM heartbeat_runs r
    JOIN issues i ON i.id = r.native_issue_id JOIN execution_workspaces w ON w.id = i.execution_workspace_id
    WHERE r.id = ANY(${[...runIds]}::uuid[]) AND w.host_id IS NOT NULL AND w.host_id <> ${hostId}`;
}

/**
 * A due query's predicate: the run whose id is the SQL expression `runId` may be swept on
 * `hostId` (its task's workspace is unbound or this host's). The same join as foreignRunsSql.
 */
export function runOnHostSql(runId: Prisma.Sql, hostId: string | undefined): Prisma.Sql {
  if (hostId === undefined) return Prisma.sql`TRUE`;
  return Prisma.sql`NOT EXISTS (SELECT 1 FROM heartbeat_runs hr
    JOIN issues hi ON hi.id = hr.native_issue_id JOIN execution_workspaces hw ON hw.id = hi.execution_workspace_id
    WHERE hr.id = ${runId} AND hw.host_id IS NOT NULL AND hw.host_id <> ${hostId})`;
}

/** A due query's predicate: the lease row `alias` may be swept on `hostId` (remote, or this host's sandbox). */
export function leaseOnHostSql(alias: string, hostId: string | undefined): Prisma.Sql {
  if (hostId === undefined) return Prisma.sql`TRUE`;
  const column = Prisma.raw(`${alias}.host_id`);
  return Prisma.sql`(${column} IS NULL OR ${column} = ${hostId})`;
}
