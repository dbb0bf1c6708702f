// Issue 23 part 1 (host affinity): the reconciler's sweeps act only on work bound to their own
// host when that work is host-local. A sweep's due units are narrowed to those this host may
// touch: a run whose execution workspace is bound to another host (finalizing or replaying it
// would write that host's files through this host's path of the same name), or a lease whose
// sandbox is another host's (a `local` sandbox: its directory and process groups are there), is
// left to its own host. Remote leases (fake, Daytona) and unbound workspaces pass: any host may
// serve them. Known limit: the narrowing follows the sweep's own due query, so a window full of
// another host's due units (a dead host's) delays this host's until they clear; pushing the
// predicate into each due query is the follow-up (see notes/H-HOST.md).
import { Prisma, type PrismaClient } from "@copyback/db/client";
import type { Sweep } from "./sweep";

/** What binds a unit to a host: its run (through the run's task's workspace) or its lease. */
export type HostBinding = { runId: string } | { leaseId: string };

export interface HostBoundSweepDeps<U> {
  db: PrismaClient;
  /** This worker's host id (deployment/host-id.ts). */
  hostId: string;
  bindingOf(unit: U): HostBinding;
}

/** The runs of `runIds` whose workspace is bound to a host other than `hostId` (with that host). */
export function foreignRunsSql(runIds: readonly string[], hostId: string): Prisma.Sql {
  return Prisma.sql`SELECT r.id::text AS id, w.host_id FROM heartbeat_runs r
    JOIN issues i ON i.id = r.native_issue_id JOIN execution_workspaces w ON w.id = i.execution_workspace_id
    WHERE r.id = ANY(${[...runIds]}::uuid[]) AND w.host_id IS NOT NULL AND w.host_id <> ${hostId}`;
}

/** The leases of `leaseIds` whose sandbox is host-local to a host other than `hostId`. */
export function foreignLeasesSql(leaseIds: readonly string[], hostId: string): Prisma.Sql {
  return Prisma.sql`SELECT l.id::text AS id FROM environment_leases l
    WHERE l.id = ANY(${[...leaseIds]}::uuid[]) AND l.host_id IS NOT NULL AND l.host_id <> ${hostId}`;
}

export function hostBoundSweep<U>(sweep: Sweep<U>, deps: HostBoundSweepDeps<U>): Sweep<U> {
  return {
    ...sweep,
    async due(limit) {
      const units = await sweep.due(limit);
      if (units.length === 0) return units;
      const bindings = units.map((unit) => deps.bindingOf(unit));
      const runIds = bindings.flatMap((b) => ("runId" in b ? [b.runId] : []));
      const leaseIds = bindings.flatMap((b) => ("leaseId" in b ? [b.leaseId] : []));
      const foreign = new Set<string>();
      if (runIds.length > 0) for (const row of await deps.db.$queryRaw<{ id: string }[]>(foreignRunsSql(runIds, deps.hostId))) foreign.add(row.id);
      if (leaseIds.length > 0) for (const row of await deps.db.$queryRaw<{ id: string }[]>(foreignLeasesSql(leaseIds, deps.hostId))) foreign.add(row.id);
      return units.filter((_, i) => {
        const b = bindings[i]!;
        return !foreign.has("runId" in b ? b.runId : b.leaseId);
      });
    },
  };
}
