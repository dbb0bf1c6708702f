// Issue 23 part 1 (host affinity), slice 4, against one real PostgreSQL with two host ids: a queued
// run whose workspace is bound to a host with no live worker (no worker_hosts row seen within the
// bound) waits for it, in the one reader behind the API, the console and the metric; a worker of
// that host that heartbeats and claims makes the reason disappear. A running run whose host has no
// live row at all says its worker stopped (host_worker_gone); a draining worker (graceful stop,
// finishing its runs) keeps its running runs quiet but no longer serves its host's queued runs.
// No requirement id exists for host affinity in REQUIREMENTS.md: the tests are named by the
// issue's rule.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { beatWorkerHost, countRunHostWaitsPerHost, countRunsWaitingPerHost, readRunHostWait, readRunHostWaits, removeWorkerHost } from "../../src/deployment/worker-hosts";
import { WORKER_STALE_AFTER_MS } from "../../src/deployment/worker-host-liveness";
import { claimQueuedRuns } from "../../src/dispatch/claim-runs";
import { createMetricsEndpoint } from "../../src/monitoring/endpoint";
import { wakeAgent } from "../../src/runs/wake-agent";
import { buildCompany, CONTROLLER, USER_ACTOR, type Company } from "../runs/runs-fixture";

const db = useTestDatabase();
let world: Company;
let number = 2000;

beforeAll(async () => {
  world = await buildCompany(db.prisma());
});

/** A queued run of a new task whose workspace is bound to `hostId` (null: unbound). */
async function queuedOn(hostId: string | null): Promise<string> {
  number += 1;
  const ws = await db.prisma().executionWorkspace.create({ data: { companyId: world.company.id, name: `ws-${number}`, hostPath: `/tmp/wait-${number}`, hostId } });
  const issue = await db.prisma().issue.create({
    data: { companyId: world.company.id, number, identifier: `ACME-${number}`, title: `Task ${number}`, status: "todo", assigneeAgentId: world.agent.id, executionWorkspaceId: ws.id },
  });
  return (await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() })).runId;
}

/** A running run of a new task bound to `hostId`, claimed by that host. */
async function runningOn(hostId: string): Promise<string> {
  const runId = await queuedOn(hostId);
  const claimed = await claimQueuedRuns(db.prisma(), { limit: 50, controller: CONTROLLER, hostId });
  expect(claimed.map((r) => r.runId)).toContain(runId);
  expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");
  return runId;
}

const worker = (hostId: string) => ({ id: randomUUID(), hostId, pid: 4242 });
const age = (workerId: string, ms: number) =>
  db.prisma().$executeRaw`UPDATE worker_hosts SET last_seen_at = now() - make_interval(secs => ${ms / 1000}) WHERE id = ${workerId}::uuid`;
const waiting = async (hostId: string) => (await countRunsWaitingPerHost(db.prisma())).find((row) => row.hostId === hostId)?.count ?? 0;

describe("worker hosts (issue 23: a run bound to a host without a live worker waits for it)", () => {
  it("host affinity: a queued run of a host that has no live worker says 'Waiting for the worker on HOST'; a live host's and an unbound one's say nothing", async () => {
    const onA = await queuedOn("wait-a");
    const onB = await queuedOn("wait-b");
    const unbound = await queuedOn(null);
    const b = worker("wait-b");
    await beatWorkerHost(db.prisma(), b);

    expect(await readRunHostWait(db.prisma(), onA)).toEqual({ code: "waiting_for_host", hostId: "wait-a", message: "Waiting for the worker on wait-a" });
    const waits = await readRunHostWaits(db.prisma(), [onA, onB, unbound]);
    expect([...waits.keys()]).toEqual([onA]);
    expect(await waiting("wait-a")).toBe(1);
    expect(await waiting("wait-b")).toBe(0);

    // Host B's only worker stops beating: past the bound its run waits too; a new beat clears it.
    await age(b.id, WORKER_STALE_AFTER_MS + 2_000);
    expect((await readRunHostWait(db.prisma(), onB))?.hostId).toBe("wait-b");
    expect(await waiting("wait-b")).toBe(1);
    await beatWorkerHost(db.prisma(), b);
    expect(await readRunHostWait(db.prisma(), onB)).toBeNull();

    // The metric: the database gauge of the scrape endpoint, per host.
    const body = await createMetricsEndpoint({ db: db.prisma() }).render();
    expect(body).toMatch(/^copyback_runs_waiting_for_host\{host="wait-a"\} 1$/m);
    expect(body).not.toMatch(/copyback_runs_waiting_for_host\{host="wait-b"\}/);
  });

  it("host affinity: a worker of that host that comes back claims the run and the reason disappears", async () => {
    const runId = await queuedOn("back-a");
    expect((await readRunHostWait(db.prisma(), runId))?.code).toBe("waiting_for_host");
    // Another host's live worker does not claim it (it stays waiting).
    await beatWorkerHost(db.prisma(), worker("back-b"));
    expect(await claimQueuedRuns(db.prisma(), { limit: 50, controller: CONTROLLER, hostId: "back-b" }).then((r) => r.map((x) => x.runId))).not.toContain(runId);
    expect((await readRunHostWait(db.prisma(), runId))?.hostId).toBe("back-a");

    await beatWorkerHost(db.prisma(), worker("back-a"));
    expect(await readRunHostWait(db.prisma(), runId)).toBeNull();
    expect(await claimQueuedRuns(db.prisma(), { limit: 50, controller: CONTROLLER, hostId: "back-a" }).then((r) => r.map((x) => x.runId))).toContain(runId);
    expect(await readRunHostWait(db.prisma(), runId)).toBeNull();
    expect(await waiting("back-a")).toBe(0);
  });

  it("host affinity: a stopped worker's row is removed at once; rows stale for a day are pruned by any heartbeat", async () => {
    const runId = await queuedOn("gone-a");
    const a = worker("gone-a");
    await beatWorkerHost(db.prisma(), a);
    expect(await readRunHostWait(db.prisma(), runId)).toBeNull();
    await removeWorkerHost(db.prisma(), a.id);
    expect((await readRunHostWait(db.prisma(), runId))?.hostId).toBe("gone-a");

    const killed = worker("gone-c");
    await beatWorkerHost(db.prisma(), killed);
    await age(killed.id, 25 * 60 * 60 * 1000);
    await beatWorkerHost(db.prisma(), worker("gone-d"));
    expect(await db.prisma().workerHost.count({ where: { id: killed.id } })).toBe(0);
  });

  it("host affinity: a running run of a host with no live worker says 'The worker on HOST stopped during this run'; of a draining or a live host it says nothing", async () => {
    const live = worker("run-live");
    const draining = worker("run-draining");
    const dead = worker("run-dead");
    for (const w of [live, draining, dead]) await beatWorkerHost(db.prisma(), w);
    const onLive = await runningOn("run-live");
    const onDraining = await runningOn("run-draining");
    const onDead = await runningOn("run-dead");
    // Host "run-dead"'s whole machine is killed: its row is never deleted, it goes stale.
    await age(dead.id, WORKER_STALE_AFTER_MS + 2_000);
    // Host "run-draining"'s worker stops gracefully: draining, still beating while it finishes its run.
    await beatWorkerHost(db.prisma(), draining, { draining: true });
    const queuedOnDraining = await queuedOn("run-draining");

    const waits = await readRunHostWaits(db.prisma(), [onLive, onDraining, onDead, queuedOnDraining]);
    expect(Object.fromEntries(waits)).toEqual({
      [onDead]: { code: "host_worker_gone", hostId: "run-dead", message: "The worker on run-dead stopped during this run" },
      // A draining worker claims no more: the queued run of its host waits, at once.
      [queuedOnDraining]: { code: "waiting_for_host", hostId: "run-draining", message: "Waiting for the worker on run-draining" },
    });
    expect(await readRunHostWait(db.prisma(), onDead)).toEqual(waits.get(onDead));
    const counts = (await countRunHostWaitsPerHost(db.prisma())).filter((row) => row.hostId.startsWith("run-"));
    expect(counts.sort((x, y) => x.hostId.localeCompare(y.hostId))).toEqual([
      { hostId: "run-dead", code: "host_worker_gone", count: 1 },
      { hostId: "run-draining", code: "waiting_for_host", count: 1 },
    ]);
    expect(await waiting("run-dead")).toBe(0);

    const body = await createMetricsEndpoint({ db: db.prisma() }).render();
    expect(body).toMatch(/^copyback_runs_stalled_on_host\{host="run-dead"\} 1$/m);
    expect(body).not.toMatch(/copyback_runs_stalled_on_host\{host="run-(live|draining)"\}/);
    expect(body).toMatch(/^copyback_runs_waiting_for_host\{host="run-draining"\} 1$/m);

    // Draining is kept from its first beat on (the next beats do not clear it).
    const first = await db.prisma().workerHost.findUniqueOrThrow({ where: { id: draining.id } });
    expect(first.drainingSince).not.toBeNull();
    await beatWorkerHost(db.prisma(), draining, { draining: true });
    await beatWorkerHost(db.prisma(), draining);
    expect((await db.prisma().workerHost.findUniqueOrThrow({ where: { id: draining.id } })).drainingSince).toEqual(first.drainingSince);

    // The draining worker is killed before it drained: its row goes stale, and its run says so.
    await age(draining.id, WORKER_STALE_AFTER_MS + 2_000);
    expect((await readRunHostWait(db.prisma(), onDraining))?.code).toBe("host_worker_gone");
    // Host "run-dead" returns: a live worker of it, and the run is quiet again (its reconciler recovers it).
    await beatWorkerHost(db.prisma(), worker("run-dead"));
    expect(await readRunHostWait(db.prisma(), onDead)).toBeNull();
    expect(await readRunHostWait(db.prisma(), onLive)).toBeNull();
  });
});
