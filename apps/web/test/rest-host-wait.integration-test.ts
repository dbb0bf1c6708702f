// Issue 23 part 1 (host affinity), slice 4: a queued run whose task's workspace is bound to a host
// with no live worker carries its reason in the REST operator API (GET /api/runs/:id `waiting`:
// the fixed code waiting_for_host and the host id) and in the task page's procedures
// (runs.latestForIssue, runs.listForIssue); once a worker of that host heartbeats, it is gone. A
// running run whose host has no live worker at all (killed machine) carries host_worker_gone in
// the same places; a draining worker (graceful stop, finishing its runs) keeps it quiet.
// Two host ids share one real PostgreSQL. No REQUIREMENTS id exists for host affinity.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { beatWorkerHost, removeWorkerHost } from "@copyback/core/deployment";
import { GET as getRun } from "~/app/api/runs/[id]/route";
import { bearer, buildAuthWorld, callerFor, configureWebApp, disconnectWebApp, insertBoardKey, json, request, sessionPrincipal, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
const db = () => testDb.prisma();
let world: AuthWorld;
let number = 700;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(db());
});
afterAll(disconnectWebApp);

/** A queued (or `status`) run of a new task of company A whose workspace is bound to `hostId`. */
async function queuedOn(hostId: string, status: "queued" | "running" = "queued") {
  number += 1;
  const companyId = world.companyA.id;
  const ws = await db().executionWorkspace.create({ data: { companyId, name: `ws-${number}`, hostPath: `/tmp/host-wait-${number}`, hostId } });
  const issue = await db().issue.create({
    data: { companyId, number, identifier: `ACME-${number}`, title: `Task ${number}`, status: "todo", assigneeAgentId: world.a.agent.id, executionWorkspaceId: ws.id },
  });
  const run = await db().heartbeatRun.create({ data: { companyId, agentId: world.a.agent.id, nativeIssueId: issue.id, status, runtimeMode: "native", ...(status === "running" ? { startedAt: new Date() } : {}) } });
  return { issueId: issue.id, runId: run.id };
}

async function restRun(runId: string) {
  const key = await insertBoardKey(db(), world.companyA.id, world.users.member.id);
  const response = await getRun(request({ path: `/api/runs/${runId}`, headers: bearer(key.secret) }), { params: Promise.resolve({ id: runId }) });
  expect(response.status).toBe(200);
  return (await json(response)).run as { status: string; waiting: unknown };
}

describe("host wait in the API and the task page (issue 23)", () => {
  it("host affinity: GET /api/runs/:id and the task page's run procedures carry waiting_for_host with the host id until a worker of that host is live", async () => {
    const { issueId, runId } = await queuedOn("web-host-a");
    const expected = { code: "waiting_for_host", hostId: "web-host-a", message: "Waiting for the worker on web-host-a" };
    expect(await restRun(runId)).toMatchObject({ status: "queued", waiting: expected });

    const member = callerFor(db(), sessionPrincipal(world.users.member.id, [{ companyId: world.companyA.id, role: "member" }]));
    const input = { companyId: world.companyA.id, issueId };
    expect((await member.runs.latestForIssue(input)).run?.waiting).toEqual(expected);
    expect((await member.runs.listForIssue(input)).runs.find((r) => r.id === runId)?.waiting).toEqual(expected);

    // Another host's worker changes nothing; the run's own host's worker clears the reason.
    await beatWorkerHost(db(), { id: randomUUID(), hostId: "web-host-b", pid: 1 });
    expect((await restRun(runId)).waiting).toEqual(expected);
    await beatWorkerHost(db(), { id: randomUUID(), hostId: "web-host-a", pid: 1 });
    expect((await restRun(runId)).waiting).toBeNull();
    expect((await member.runs.latestForIssue(input)).run?.waiting).toBeNull();
    expect((await member.runs.listForIssue(input)).runs.find((r) => r.id === runId)?.waiting).toBeNull();
  });

  it("host affinity: a settled run never carries a host wait", async () => {
    const { runId } = await queuedOn("web-host-c");
    await db().heartbeatRun.update({ where: { id: runId }, data: { status: "failed", finishedAt: new Date() } });
    expect((await restRun(runId)).waiting).toBeNull();
  });

  it("host affinity: a running run whose host has no live worker carries host_worker_gone in GET /api/runs/:id and the task page's procedures; a draining or live worker of its host keeps it quiet", async () => {
    const { issueId, runId } = await queuedOn("web-host-d", "running");
    const gone = { code: "host_worker_gone", hostId: "web-host-d", message: "The worker on web-host-d stopped during this run" };
    const member = callerFor(db(), sessionPrincipal(world.users.member.id, [{ companyId: world.companyA.id, role: "member" }]));
    const input = { companyId: world.companyA.id, issueId };
    const everywhere = async () => [(await restRun(runId)).waiting, (await member.runs.latestForIssue(input)).run?.waiting, (await member.runs.listForIssue(input)).runs.find((r) => r.id === runId)?.waiting];
    expect(await restRun(runId)).toMatchObject({ status: "running", waiting: gone });
    expect(await everywhere()).toEqual([gone, gone, gone]);

    // A worker of that host that is draining (stopping gracefully, finishing its runs): quiet.
    const drainer = { id: randomUUID(), hostId: "web-host-d", pid: 1 };
    await beatWorkerHost(db(), drainer, { draining: true });
    expect(await everywhere()).toEqual([null, null, null]);
    // Drained and gone: the run says so again; a live worker of the host quiets it.
    await removeWorkerHost(db(), drainer.id);
    expect(await everywhere()).toEqual([gone, gone, gone]);
    await beatWorkerHost(db(), { id: randomUUID(), hostId: "web-host-d", pid: 1 });
    expect(await everywhere()).toEqual([null, null, null]);
  });
});
