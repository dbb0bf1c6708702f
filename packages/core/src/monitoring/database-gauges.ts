// The gauges that describe the database, computed on scrape: runs by status
// and phase, open recovery actions by cause and age, retained sandboxes by provider. Small grouped queries per scrape are
// cheaper than keeping a count current in every process that changes a run or an action, and they
// read the same on every endpoint (aggregate with max(), not sum(), across processes). A scrape
// whose queries fail still answers: `copyback_database_up` is 0 and the database gauges are left
// out rather than reported stale.
import { Gauge, Registry } from "prom-client";
import type { PrismaClient } from "@copyback/db/client";
import { countRunHostWaitsPerHost } from "../deployment/worker-hosts";
import { leaseHeldSql } from "../leases/lease-holds";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "../records/actions";
import { ageBucket, runGaugeSamples, type ActionRow, type RunRow } from "./database-samples";

export interface DatabaseSnapshot {
  runs: RunRow[];
  actions: ActionRow[];
  retained: { provider: string; count: number }[];
  /** Issue 23: queued runs bound to a host that is not serving, per host (deployment/worker-hosts.ts). */
  waitingForHost: { hostId: string; count: number }[];
  /** Issue 23: running runs bound to a host with no live worker at all, per host (same reader). */
  stalledOnHost: { hostId: string; count: number }[];
}

type Queryable = Pick<PrismaClient, "$queryRaw">;

/** The rows behind the gauges: two grouped reads, no row of its own is touched. */
export async function loadDatabaseSnapshot(db: Queryable): Promise<DatabaseSnapshot> {
  const [runs, actions, retained, hostWaits] = await Promise.all([
    db.$queryRaw<RunRow[]>`
      SELECT status::text AS status, COALESCE(native_phase, 'none') AS phase, count(*)::int AS count
      FROM heartbeat_runs GROUP BY 1, 2`,
    // Open = the partial unique index's statuses (records/actions/open-statuses.ts).
    db.$queryRaw<ActionRow[]>`
      SELECT cause, EXTRACT(EPOCH FROM (now() - created_at))::float8 AS "ageSeconds"
      FROM issue_recovery_actions WHERE status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}`,
    // Retained sandboxes: not destroyed, and held for recovery (leases/lease-holds.ts).
    db.$queryRaw<{ provider: string; count: number }[]>`
      SELECT l.provider::text AS provider, count(*)::int AS count
      FROM environment_leases l WHERE l.status <> 'destroyed'::lease_status AND ${leaseHeldSql("l")} GROUP BY 1`,
    countRunHostWaitsPerHost(db),
  ]);
  const perHost = (code: string) => hostWaits.filter((row) => row.code === code).map(({ hostId, count }) => ({ hostId, count }));
  return { runs, actions, retained, waitingForHost: perHost("waiting_for_host"), stalledOnHost: perHost("host_worker_gone") };
}

/**
 * The database gauges of one endpoint. One snapshot serves every gauge of a scrape (prom-client
 * collects a registry's metrics concurrently): `refresh()` starts the scrape's snapshot, and every
 * gauge's collect awaits that one. A registry read without a refresh loads its own once.
 */
export function createDatabaseGauges(db: Queryable): { registry: Registry; refresh(): void } {
  const registry = new Registry();
  let current: Promise<DatabaseSnapshot | null> | null = null;
  const refresh = () => {
    current = loadDatabaseSnapshot(db).catch(() => null);
  };
  const snapshot = (): Promise<DatabaseSnapshot | null> => {
    if (!current) refresh();
    return current as Promise<DatabaseSnapshot | null>;
  };

  new Gauge({
    name: "copyback_database_up",
    help: "1 when this scrape could read the database gauges, 0 when the database did not answer.",
    registers: [registry],
    async collect() {
      this.set((await snapshot()) ? 1 : 0);
    },
  });
  new Gauge({
    name: "copyback_runs",
    help: "Runs by status and native finalization phase (phase=none for runs that never had one).",
    labelNames: ["status", "phase"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const s = await snapshot();
      if (!s) return;
      for (const sample of runGaugeSamples(s.runs)) this.set(sample.labels, sample.value);
    },
  });
  new Gauge({
    name: "copyback_recovery_actions_open",
    help: "Open recovery actions (active or escalated) by cause and age bucket (lt_1h, 1h_to_24h, ge_24h).",
    labelNames: ["cause", "age"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const s = await snapshot();
      if (!s) return;
      const counts = new Map<string, { cause: string; age: string; value: number }>();
      for (const row of s.actions) {
        const age = ageBucket(row.ageSeconds);
        const key = `${row.cause}\u0000${age}`;
        const entry = counts.get(key) ?? { cause: row.cause, age, value: 0 };
        entry.value += 1;
        counts.set(key, entry);
      }
      for (const { cause, age, value } of counts.values()) this.set({ cause, age }, value);
    },
  });
  new Gauge({
    name: "copyback_recovery_action_oldest_open_seconds",
    help: "Age of the oldest open recovery action of each cause, in seconds.",
    labelNames: ["cause"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const s = await snapshot();
      if (!s) return;
      const oldest = new Map<string, number>();
      for (const row of s.actions) oldest.set(row.cause, Math.max(oldest.get(row.cause) ?? 0, row.ageSeconds));
      for (const [cause, seconds] of oldest) this.set({ cause }, Math.round(seconds));
    },
  });
  new Gauge({
    name: "copyback_retained_sandboxes",
    help: "Sandbox allocations retained for recovery (not destroyed, held by an open action, an intent, a refused reuse or an uncommitted run), by provider.",
    labelNames: ["provider"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const s = await snapshot();
      if (!s) return;
      for (const row of s.retained) this.set({ provider: row.provider }, Number(row.count));
    },
  });
  new Gauge({
    name: "copyback_runs_waiting_for_host",
    help: "Queued runs whose task's workspace is bound to a host that has no live, non-draining worker (issue 23: they start once a worker of that host is back), by host id.",
    labelNames: ["host"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const s = await snapshot();
      if (!s) return;
      for (const row of s.waitingForHost) this.set({ host: row.hostId }, row.count);
    },
  });
  // A gauge of its own rather than a label on the one above: a queued run waiting for a host is
  // ordinary (a host stopped, its runs start once it is back), while a run stopped mid-way on a
  // dead host holds that host's work until it returns (only its reconciler may recover it), so an
  // operator may want to alert on this one alone; and the existing gauge keeps meaning what its
  // name says (queued runs), for dashboards that sum it.
  new Gauge({
    name: "copyback_runs_stalled_on_host",
    help: "Running runs whose task's workspace is bound to a host that has no live worker, draining ones included (issue 23: that host's reconciler recovers them once a worker of it is back), by host id.",
    labelNames: ["host"] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const s = await snapshot();
      if (!s) return;
      for (const row of s.stalledOnHost) this.set({ host: row.hostId }, row.count);
    },
  });
  return { registry, refresh };
}
