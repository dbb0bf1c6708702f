// Through the real route handlers and tRPC callers: POST /api/runs/:id/stop (R-RC-7), the
// listing of a repair hold beside a newer incident with its lease ids and the lease with its
// intents and receipts (R-RR-4), and Retry, messages and /new against an open hold (R-RR-7).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { openOwnerUnverifiedAction } from "@copyback/core/records";
import { GET as listRecoveryActions } from "~/app/api/issues/[id]/recovery-actions/route";
import { GET as getLease } from "~/app/api/environment-leases/[leaseId]/route";
import { POST as stopRunPost } from "~/app/api/runs/[id]/stop/route";
import { bearer, buildAuthWorld, callerFor, configureWebApp, CROSS_SITE, disconnectWebApp, insertAgentKey, insertBoardKey, json, request, sessionPrincipal, type AuthWorld, type Call } from "./auth-fixture";
import { createFileHold, type FileHold } from "./file-hold-fixture";

const testDb = useTestDatabase();
let world: AuthWorld;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
});
afterAll(disconnectWebApp);

type Handler = (req: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
const call = (handler: Handler, params: Record<string, string>, c: Call) => handler(request(c), { params: Promise.resolve(params) });
const db = () => testDb.prisma();

let issueNumber = 90_000;
async function runningRun(status: "running" | "queued" = "running") {
  const number = ++issueNumber;
  const issue = await db().issue.create({ data: { companyId: world.companyA.id, number, identifier: `ACME-${number}`, title: `Stop target ${number}`, status: "in_progress", assigneeAgentId: world.a.agent.id } });
  const run = await db().heartbeatRun.create({ data: { companyId: world.companyA.id, agentId: world.a.agent.id, nativeIssueId: issue.id, status, runtimeMode: "native", startedAt: status === "running" ? new Date() : null } });
  if (status === "running") await db().nativeRunFinalization.create({ data: { companyId: world.companyA.id, runId: run.id, issueId: issue.id, phase: "observed" } });
  return run;
}

function stop(runId: string, headers: Record<string, string>) {
  return call(stopRunPost, { id: runId }, { path: `/api/runs/${runId}/stop`, headers });
}

describe("POST /api/runs/:id/stop", () => {
  it("R-RC-7 a board key with issues:write records the stop request (202); a repeat answers the same request", async () => {
    const key = await insertBoardKey(db(), world.companyA.id, world.users.member.id);
    const run = await runningRun();
    const first = await stop(run.id, bearer(key.secret));
    expect(first.status).toBe(202);
    const body = await json(first);
    expect(body).toMatchObject({ status: "stop_requested", runId: run.id, duplicate: false, requestId: expect.any(String) });
    const again = await json(await stop(run.id, bearer(key.secret)));
    expect(again).toMatchObject({ status: "stop_requested", requestId: body.requestId, duplicate: true });
    const row = await db().heartbeatRun.findUniqueOrThrow({ where: { id: run.id } });
    // The worker executing the run finishes the stop; the request is what it polls for.
    expect(row.status).toBe("running");
    expect(row.runnerProfileJson).toMatchObject({ stopRequest: { requestId: body.requestId, actor: { type: "user", id: world.users.member.id } } });
  });

  it("R-RC-7 a queued run is cancelled at once", async () => {
    const key = await insertBoardKey(db(), world.companyA.id, world.users.owner.id);
    const run = await runningRun("queued");
    const response = await stop(run.id, bearer(key.secret));
    expect(response.status).toBe(202);
    expect(await json(response)).toMatchObject({ status: "cancelled" });
    expect(await db().heartbeatRun.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({ status: "cancelled", errorCode: "run_stopped" });
  });

  it("R-RC-7 stopping a finished run answers 409 run_not_active and changes nothing", async () => {
    const key = await insertBoardKey(db(), world.companyA.id, world.users.member.id);
    const before = await db().heartbeatRun.findUniqueOrThrow({ where: { id: world.a.run.id } });
    const response = await stop(world.a.run.id, bearer(key.secret));
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "run_not_active", details: { status: "failed" } });
    expect(await db().heartbeatRun.findUniqueOrThrow({ where: { id: world.a.run.id } })).toEqual(before);
  });

  it("R-RC-7 refuses agents, other companies and requests without credentials, leaving the run untouched", async () => {
    const run = await runningRun();
    const agentKey = await insertAgentKey(db(), world.companyA.id, world.a.agent.id);
    expect((await stop(run.id, bearer(agentKey.secret))).status).toBe(403);
    const otherKey = await insertBoardKey(db(), world.companyB.id, world.users.otherOwner.id);
    expect((await stop(run.id, bearer(otherKey.secret))).status).toBe(404);
    expect((await stop(run.id, { ...CROSS_SITE })).status).toBe(401);
    const row = await db().heartbeatRun.findUniqueOrThrow({ where: { id: run.id } });
    expect(row.runnerProfileJson).not.toHaveProperty("stopRequest");
  });
});

describe("R-RR-4: a repair hold beside a newer incident, and its lease", () => {
  let hold: FileHold;
  let newerId: string;
  let newerLeaseId: string;

  beforeAll(async () => {
    hold = await createFileHold(db(), { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: world.a.environment.id }, "legacy");
    // A newer incident on the same task: another run's unverified copyback owner, with its own lease.
    const run = await db().heartbeatRun.create({ data: { companyId: world.companyA.id, agentId: world.a.agent.id, nativeIssueId: hold.issueId, status: "running", runtimeMode: "native" } });
    const lease = await db().environmentLease.create({
      data: { companyId: world.companyA.id, environmentId: world.a.environment.id, runId: run.id, issueId: hold.issueId, provider: "fake", pluginId: "builtin.fake", providerLeaseId: `sbx-${randomUUID()}`, leasePolicy: "ephemeral", status: "active" },
    });
    newerLeaseId = lease.id;
    newerId = (
      await withTransaction(db(), (tx) =>
        openOwnerUnverifiedAction(tx, {
          companyId: world.companyA.id,
          issueId: hold.issueId,
          runId: run.id,
          receipt: { token: `tok-${randomUUID()}`, host: "other-host", pid: 4242, processStart: "123", bootId: "boot" },
          reason: "controller_on_other_host",
          phase: "workspace_finalizing",
          resultId: null,
          leaseIds: [lease.id],
        }),
      )
    ).actionId;
  });

  it("R-RR-4 GET /api/issues/:id/recovery-actions lists the older repair hold beside the newer incident, each with its exact lease ids", async () => {
    const key = await insertBoardKey(db(), world.companyA.id, world.users.member.id);
    const response = await call(listRecoveryActions, { id: hold.issueId }, { path: `/api/issues/${hold.issueId}/recovery-actions`, headers: bearer(key.secret) });
    expect(response.status).toBe(200);
    const { actions } = (await response.json()) as { actions: Array<{ id: string; cause: string; open: boolean; status: string; runId: string; leaseId: string | null; leaseIds: string[] }> };
    expect(actions.map((a) => a.id)).toEqual([newerId, hold.actionId]);
    expect(actions.find((a) => a.id === hold.actionId)).toMatchObject({ cause: "legacy_workspace_copyback_repair_required", open: true, status: "active", runId: hold.runId, leaseId: hold.leaseId, leaseIds: [hold.leaseId] });
    // The newer incident does not supersede the hold; it names its own lease through its evidence.
    expect(actions.find((a) => a.id === newerId)).toMatchObject({ open: true, leaseIds: [newerLeaseId] });
  });

  it("R-RR-4 GET /api/environment-leases/:leaseId shows the lease with its intents, receipts, run and the holds that keep it", async () => {
    const key = await insertBoardKey(db(), world.companyA.id, world.users.member.id);
    const response = await call(getLease, { leaseId: hold.leaseId }, { path: `/api/environment-leases/${hold.leaseId}`, headers: bearer(key.secret) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body.lease).toMatchObject({ id: hold.leaseId, status: "released", leasePolicy: "retain_on_failure", runId: hold.runId });
    expect(body.records).toMatchObject({
      intents: { stopAndRetain: { state: "absent" }, destroy: { state: "absent" } },
      receipts: { stopAndRetain: { state: "present", value: { method: "builtin.stopLease", pluginId: "builtin.fake" } } },
      stopConfirmed: true,
    });
    expect(body.run).toMatchObject({ id: hold.runId, status: "failed", runtimeMode: "legacy" });
    expect(body.heldBy).toEqual([expect.objectContaining({ id: hold.actionId, cause: "legacy_workspace_copyback_repair_required", status: "active" })]);
    // The newer incident's lease is held by the incident only, through its evidence.
    const newer = (await (await call(getLease, { leaseId: newerLeaseId }, { path: `/api/environment-leases/${newerLeaseId}`, headers: bearer(key.secret) })).json()) as { heldBy: Array<{ id: string }>; records: { stopConfirmed: boolean } };
    expect(newer.heldBy.map((h) => h.id)).toEqual([newerId]);
    expect(newer.records.stopConfirmed).toBe(false);
  });

  it("R-RR-7 Retry, a message and /new through the console leave the repair hold as it was", async () => {
    const member = callerFor(db(), sessionPrincipal(world.users.member.id, [{ companyId: world.companyA.id, role: "member" }]));
    const before = await db().issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId } });
    const retry = await member.runs.retry({ companyId: world.companyA.id, runId: hold.runId }).then(() => null, (e: unknown) => e as { code: string; cause?: { code?: string; message?: string } });
    expect(retry?.code).toBe("CONFLICT");
    expect(retry?.cause).toMatchObject({ code: "recovery_hold_open" });
    expect(retry?.cause?.message).toMatch(/copy its required files back/);
    const message = await member.issues.addMessage({ companyId: world.companyA.id, issueId: hold.issueId, body: "Any news?" });
    expect(message.deliveryHeld).toMatchObject({ actionId: expect.any(String) });
    const reset = await member.issues.addMessage({ companyId: world.companyA.id, issueId: hold.issueId, body: "/new" });
    expect(reset).toMatchObject({ newConversation: true, conversationGeneration: 2 });
    expect(await db().issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.actionId } })).toEqual(before);
    expect(await db().heartbeatRun.count({ where: { nativeIssueId: hold.issueId, status: "queued" } })).toBe(0);
  });
});
