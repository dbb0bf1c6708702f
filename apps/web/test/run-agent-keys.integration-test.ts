// Run-scoped agent API keys against a real database and the real handlers:
// a key minted for a run (packages/core/src/runs/run-agent-key.ts) finishes that run while it
// runs and nothing else - not another run of the same agent, no tRPC procedure, no operator route
// - and is dead (401) once the run ends, whichever way it ends: the heartbeat_runs trigger revokes
// it in the same statement, and the key check itself refuses a key whose run is not running.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { mintRunAgentKey, revokeRunAgentKeys } from "@copyback/core/runs";
import { POST as finishRun } from "~/app/api/runs/[id]/finish/route";
import { GET as getRun } from "~/app/api/runs/[id]/route";
import { GET as trpcGet } from "~/app/api/trpc/[trpc]/route";
import { apiKeyKindOf, hashApiKey } from "~/server/auth/api-keys";
import { bearer, buildAuthWorld, callerFor, configureWebApp, disconnectWebApp, json, request, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
const db = () => testDb.prisma();
let world: AuthWorld;
let number = 500;

beforeAll(async () => {
  configureWebApp(testDb.url(), "local");
  world = await buildAuthWorld(db());
});
afterAll(disconnectWebApp);

const document = { schema: "copyback.run-result.v1", outcome: "in_review", summary: "Through the run's own key." };

async function runningRun(agentId = world.a.agent.id) {
  const n = ++number;
  const issue = await db().issue.create({ data: { companyId: world.companyA.id, number: n, identifier: `ACME-${n}`, title: `Key ${n}`, status: "in_progress" } });
  const run = await db().heartbeatRun.create({
    data: { companyId: world.companyA.id, agentId, nativeIssueId: issue.id, status: "running", runtimeMode: "native", startedAt: new Date() },
  });
  await db().nativeRunFinalization.create({ data: { companyId: world.companyA.id, runId: run.id, issueId: issue.id, phase: "observed" } });
  const key = await mintRunAgentKey(db(), { companyId: world.companyA.id, agentId, runId: run.id });
  return { run, key };
}

const finish = (runId: string, secret: string, dedupeKey = "turn-1") =>
  finishRun(request({ path: `/api/runs/${runId}/finish`, body: { dedupeKey, result: document }, headers: bearer(secret) }), { params: Promise.resolve({ id: runId }) });

describe("run-scoped agent keys", () => {
  it("are agent keys in the web app's format, stored as a sha256 and bound to their run", async () => {
    const { run, key } = await runningRun();
    expect(apiKeyKindOf(key.secret)).toBe("agent");
    const row = await db().agentApiKey.findUniqueOrThrow({ where: { id: key.keyId } });
    expect(row).toMatchObject({ runId: run.id, agentId: world.a.agent.id, companyId: world.companyA.id, keyHash: hashApiKey(key.secret), revokedAt: null });
    expect(JSON.stringify(row)).not.toContain(key.secret);
  });

  it("finish their own running run (200 accepted)", async () => {
    const { run, key } = await runningRun();
    const response = await finish(run.id, key.secret);
    expect(response.status).toBe(200);
    expect(await json(response)).toMatchObject({ status: "accepted", duplicate: false });
  });

  it("are refused for another run of the same agent (403 not_run_key), which gets no result", async () => {
    const mine = await runningRun();
    const other = await runningRun();
    const response = await finish(other.run.id, mine.key.secret);
    expect(response.status).toBe(403);
    expect(await json(response)).toMatchObject({ code: "not_run_key" });
    expect(await db().nativeRunResult.count({ where: { runId: other.run.id } })).toBe(0);
  });

  it("act for nothing but the finish call: the run's own read route is 403, a tRPC procedure is 403", async () => {
    const { run, key } = await runningRun();
    const read = await getRun(request({ path: `/api/runs/${run.id}`, headers: bearer(key.secret) }), { params: Promise.resolve({ id: run.id }) });
    expect(read.status).toBe(403);
    const input = encodeURIComponent(JSON.stringify({ json: { companyId: world.companyA.id } }));
    const trpc = await trpcGet(new Request(`http://127.0.0.1:3100/api/trpc/issues.list?input=${input}`, { headers: { host: "127.0.0.1:3100", ...bearer(key.secret) } }));
    expect(trpc.status).toBe(403);
  });

  it.each(["succeeded", "failed", "cancelled", "timed_out"] as const)("are revoked by the database when the run ends %s, and answer 401 invalid_api_key from then on", async (status) => {
    const { run, key } = await runningRun();
    await db().heartbeatRun.update({ where: { id: run.id }, data: { status, finishedAt: new Date() } });
    const row = await db().agentApiKey.findUniqueOrThrow({ where: { id: key.keyId } });
    expect(row.revokedAt).not.toBeNull();
    const response = await finish(run.id, key.secret);
    expect(response.status).toBe(401);
    expect(await json(response)).toMatchObject({ code: "invalid_api_key" });
    expect(await db().nativeRunResult.count({ where: { runId: run.id } })).toBe(0);
  });

  it("are refused while their run is not running even if nothing revoked them (the check does not rely on the trigger)", async () => {
    const { run, key } = await runningRun();
    // A key whose revocation was lost (put back by hand): still refused, its run is not running.
    await db().heartbeatRun.update({ where: { id: run.id }, data: { status: "failed", finishedAt: new Date() } });
    await db().agentApiKey.update({ where: { id: key.keyId }, data: { revokedAt: null } });
    expect((await finish(run.id, key.secret)).status).toBe(401);
  });

  it("are revoked when the agent's turn is over (revokeRunAgentKeys), other keys of the agent untouched", async () => {
    const { run, key } = await runningRun();
    const other = await runningRun();
    expect(await revokeRunAgentKeys(db(), run.id)).toBe(1);
    expect(await revokeRunAgentKeys(db(), run.id)).toBe(0);
    expect((await finish(run.id, key.secret)).status).toBe(401);
    expect((await db().agentApiKey.findUniqueOrThrow({ where: { id: other.key.keyId } })).revokedAt).toBeNull();
  });

  it("are not listed or managed on the API keys page", async () => {
    const { key } = await runningRun();
    const listed = await callerFor(db(), { kind: "local_board" }).agentKeys.list({ companyId: world.companyA.id, includeRevoked: true });
    expect(listed.map((k) => k.id)).not.toContain(key.keyId);
  });
});
