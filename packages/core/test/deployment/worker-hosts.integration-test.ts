// Issue 23 part 1 (host affinity), slice 4, against one real PostgreSQL with two host ids: a queued
// run whose workspace is bound to a host with no live worker (no worker_hosts row seen within the
// bound) waits for it, in the one reader behind the API, the console and the metric; a worker of
// that host that heartbeats and claims makes the reason disappear. No requirement id exists for
// host affinity in REQUIREMENTS.md: the tests are named by the issue's rule.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { beatWorkerHost, countRunsWaitingPerHost, readRunHostWait, readRunHostWaits, removeWorkerHost } from "../../src/deployment/worker-hosts";
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
});
