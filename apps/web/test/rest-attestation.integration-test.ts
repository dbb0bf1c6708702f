// The operator's stop attestation through the documented REST route (R-ATT-1..3) and R-ATT-3's
// rule on the generic resolve route, against real unverified-owner holds (recovery-fixture):
// 200 then an idempotent repeat, 409 refusals with stable codes and nothing written, 404, 422.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import {
  attestationTokenOf,
  openOwnerUnverifiedAction,
  readOwnerUnverifiedEvidence,
} from "@copyback/core/records";
import { POST as resumeWorkspaceFinalization } from "~/app/api/issues/[id]/recovery-actions/resume-workspace-finalization/route";
import { POST as resolveRecoveryAction } from "~/app/api/issues/[id]/recovery-actions/resolve/route";
import { GET as listRecoveryActions } from "~/app/api/issues/[id]/recovery-actions/route";
import { bearer, buildAuthWorld, configureWebApp, disconnectWebApp, insertBoardKey, json, request, type AuthWorld, type Call } from "./auth-fixture";
import { carriesReceipt, createOwnerHold, holdState, type OwnerHold } from "./recovery-fixture";

const testDb = useTestDatabase();
const db = () => testDb.prisma();
let world: AuthWorld;
let ownerKey: string;
let managerKey: string;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(db());
  ownerKey = (await insertBoardKey(db(), world.companyA.id, world.users.owner.id)).secret;
  managerKey = (await insertBoardKey(db(), world.companyA.id, world.users.manager.id)).secret;
});
afterAll(disconnectWebApp);

type Handler = (req: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
const call = (handler: Handler, issueId: string, c: Call) => handler(request(c), { params: Promise.resolve({ id: issueId }) });

const hold = () => createOwnerHold(db(), { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: world.a.environment.id });

const STOP_EVIDENCE = "GKE: pod copyback-worker-7f9c deleted 10:02 UTC; its copyback children exited with it";
const body = (h: OwnerHold, overrides: Record<string, unknown> = {}) => ({
  actionId: h.actionId,
  runId: h.runId,
  ownerToken: h.receipt.token,
  controllerAndCopybackStopped: true,
  stopEvidence: STOP_EVIDENCE,
  ...overrides,
});

function resume(h: OwnerHold, payload: unknown, key = ownerKey) {
  return call(resumeWorkspaceFinalization, h.issueId, {
    path: `/api/issues/${h.issueId}/recovery-actions/resume-workspace-finalization`,
    body: payload,
    headers: bearer(key),
  });
}

function resolve(h: OwnerHold, payload: Record<string, unknown>, key = managerKey) {
  return call(resolveRecoveryAction, h.issueId, {
    path: `/api/issues/${h.issueId}/recovery-actions/resolve`,
    body: { actionId: h.actionId, ...payload },
    headers: bearer(key),
  });
}

describe("POST /api/issues/:id/recovery-actions/resume-workspace-finalization", () => {
  it("R-ATT-1, R-ATT-3: answers 200 with the exact action, run and lease ids and releases exactly the receipt; the same request again answers already_attested and writes nothing", async () => {
    const h = await hold();
    const first = await resume(h, body(h));
    expect(first.status).toBe(200);
    expect(await json(first)).toEqual({ actionId: h.actionId, runId: h.runId, leaseIds: [h.leaseId], status: "attested" });
    expect(await carriesReceipt(db(), h.runId)).toBe(false);
    const after = await holdState(db(), h);
    expect(after.action).toMatchObject({ status: "active", evidence: { attestation: { stopEvidence: STOP_EVIDENCE, ownerToken: h.receipt.token } } });
    expect(after.activity).toBe(1);

    const repeat = await resume(h, body(h));
    expect(repeat.status).toBe(200);
    expect(await json(repeat)).toEqual({ actionId: h.actionId, runId: h.runId, leaseIds: [h.leaseId], status: "already_attested" });
    expect(await holdState(db(), h)).toEqual(after);
  });

  it("R-ATT-3: a refusal is a 409 with a stable code naming what changed, and nothing is written", async () => {
    const stale = await hold();
    const before = await holdState(db(), stale);
    const response = await resume(stale, body(stale, { ownerToken: "a-token-from-an-older-inspection" }));
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "owner_changed", message: expect.any(String), details: { actionId: stale.actionId, runId: stale.runId } });
    expect(await holdState(db(), stale)).toEqual(before);

    const newer = await hold();
    await db().heartbeatRun.create({ data: { companyId: world.companyA.id, agentId: world.a.agent.id, nativeIssueId: newer.issueId, runtimeMode: "native", status: "queued" } });
    const beforeNewer = await holdState(db(), newer);
    const refused = await resume(newer, body(newer));
    expect(refused.status).toBe(409);
    expect(await json(refused)).toMatchObject({ code: "newer_run" });
    expect(await holdState(db(), newer)).toEqual(beforeNewer);
    expect(await carriesReceipt(db(), newer.runId)).toBe(true);
  });

  it("R-ATT-3: an attestation of a newer owner's token never releases it: after the receipt was replaced, the old token is refused", async () => {
    const h = await hold();
    const newer = { ...h.receipt, token: `${h.receipt.token}-newer-owner` };
    await db().$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object('nativeWorkspaceFinalizationOwner', ${JSON.stringify(newer)}::jsonb) WHERE id = ${h.runId}::uuid`;
    const response = await resume(h, body(h));
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "owner_changed" });
    expect(await carriesReceipt(db(), h.runId)).toBe(true);
  });

  it("answers 404 for an action this task does not have (another task's included)", async () => {
    const h = await hold();
    const other = await hold();
    for (const actionId of [crypto.randomUUID(), other.actionId]) {
      const response = await resume(h, body(h, { actionId }));
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ code: "not_found" });
    }
    expect(await carriesReceipt(db(), h.runId)).toBe(true);
    expect(await carriesReceipt(db(), other.runId)).toBe(true);
  });

  it("R-ATT-1: a malformed body is a 422 invalid_request and writes nothing", async () => {
    const h = await hold();
    const before = await holdState(db(), h);
    for (const payload of [
      body(h, { controllerAndCopybackStopped: false }),
      body(h, { controllerAndCopybackStopped: "true" }),
      body(h, { stopEvidence: "" }),
      body(h, { runId: "run-1" }),
      body(h, { note: "unexpected field" }),
      { actionId: h.actionId },
    ]) {
      const response = await resume(h, payload);
      expect(response.status).toBe(422);
      expect(await json(response)).toMatchObject({ code: "invalid_request", issues: expect.any(Array) });
    }
    const raw = await call(resumeWorkspaceFinalization, h.issueId, {
      method: "POST",
      path: `/api/issues/${h.issueId}/recovery-actions/resume-workspace-finalization`,
      rawBody: "{not json",
      headers: bearer(ownerKey),
    });
    expect(raw.status).toBe(422);
    expect(await holdState(db(), h)).toEqual(before);
  });

  it("R-ATT-2: a runtime manager's key is refused with 403 and nothing is written", async () => {
    const h = await hold();
    const before = await holdState(db(), h);
    const response = await resume(h, body(h), managerKey);
    expect(response.status).toBe(403);
    expect(await json(response)).toMatchObject({ code: "forbidden" });
    expect(await holdState(db(), h)).toEqual(before);
  });
});

describe("a malformed owner receipt's hold through the route", () => {
  /** The hold's run now carries a receipt no owner writes; finalization's writer opens the malformed receipt's hold. */
  async function malformedHold() {
    const h = await hold();
    await db().$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || '{"nativeWorkspaceFinalizationOwner": {"token": 7}}'::jsonb WHERE id = ${h.runId}::uuid`;
    const opened = await openOwnerUnverifiedAction(db(), {
      companyId: world.companyA.id, issueId: h.issueId, runId: h.runId, receipt: null, reason: "receipt_malformed", phase: "workspace_finalizing", resultId: h.resultId, leaseIds: [h.leaseId],
    });
    const evidence = readOwnerUnverifiedEvidence((await db().issueRecoveryAction.findUniqueOrThrow({ where: { id: opened.actionId } })).evidence);
    const token = evidence ? attestationTokenOf(evidence) : null;
    if (!opened.created || !token) throw new Error("fixture: no malformed-receipt hold");
    return { ...h, actionId: opened.actionId, token };
  }

  it("R-ATT-1, R-ATT-3: attested by action id with the hold's fixed reference (malformed-receipt:sha256:...): 200, exactly that receipt released; a wrong reference is 409 owner_changed and a bad body 422, nothing written", async () => {
    const h = await malformedHold();
    expect(h.token).toMatch(/^malformed-receipt:sha256:[0-9a-f]{64}$/);
    const before = await holdState(db(), h);
    const wrong = await resume(h, body(h, { ownerToken: `malformed-receipt:sha256:${"0".repeat(64)}` }));
    expect(wrong.status).toBe(409);
    expect(await json(wrong)).toMatchObject({ code: "owner_changed" });
    for (const payload of [body(h, { ownerToken: h.token, controllerAndCopybackStopped: false }), body(h, { ownerToken: "" }), body(h, { ownerToken: h.token, actionId: "not-a-uuid" })]) {
      expect((await resume(h, payload)).status).toBe(422);
    }
    expect(await holdState(db(), h)).toEqual(before);

    const admitted = await resume(h, body(h, { ownerToken: h.token }));
    expect(admitted.status).toBe(200);
    expect(await json(admitted)).toEqual({ actionId: h.actionId, runId: h.runId, leaseIds: [h.leaseId], status: "attested" });
    expect(await carriesReceipt(db(), h.runId)).toBe(false);
  });
});

describe("POST /api/issues/:id/recovery-actions/resolve on an unverified-owner hold", () => {
  it("R-ATT-3: generic resolution, false-positive included, cannot dismiss the hold: 409 hold_requires_attestation, nothing written", async () => {
    const h = await hold();
    const before = await holdState(db(), h);
    // Valid bodies of every outcome (an invalid body is refused earlier, 422): each is refused for the hold itself.
    const source = { sourceIssueStatus: "in_progress", executionReconciliation: { runId: h.runId, leaseId: h.leaseId, runStatus: "running" } };
    for (const payload of [
      { outcome: "false_positive", note: "Looked fine to me.", ...source },
      { outcome: "cancelled", note: "Discard it.", ...source },
      {
        outcome: "restored",
        ...source,
        workspaceRepairEvidence: { stopEvidence: "looked at it", recoveredFiles: "README.md" },
      },
    ]) {
      for (const key of [managerKey, ownerKey]) {
        const response = await resolve(h, payload, key);
        expect(response.status).toBe(409);
        expect(await json(response)).toMatchObject({ code: "hold_requires_attestation", details: { actionId: h.actionId, runId: h.runId } });
      }
    }
    expect(await holdState(db(), h)).toEqual(before);
  });

  it("R-ATT-3: an attested hold waiting for its copyback cannot be dismissed either", async () => {
    const h = await hold();
    expect((await resume(h, body(h))).status).toBe(200);
    const before = await holdState(db(), h);
    const response = await resolve(h, { outcome: "false_positive", note: "n", sourceIssueStatus: "in_progress", executionReconciliation: { runId: h.runId, leaseId: h.leaseId, runStatus: "running" } });
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "hold_requires_attestation" });
    expect(await holdState(db(), h)).toEqual(before);
  });

  it("R-RR-5 a cause this API does not resolve answers 409 action_not_resolvable, nothing written", async () => {
    const response = await call(resolveRecoveryAction, world.a.issue.id, {
      path: `/api/issues/${world.a.issue.id}/recovery-actions/resolve`,
      body: { actionId: world.a.olderHold.id, outcome: "false_positive", note: "n", sourceIssueStatus: "in_progress", executionReconciliation: { runId: world.a.run.id, leaseId: world.a.lease.id, runStatus: "failed" } },
      headers: bearer(managerKey),
    });
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "action_not_resolvable" });
    expect((await db().issueRecoveryAction.findUniqueOrThrow({ where: { id: world.a.olderHold.id } })).status).toBe("active");
  });
});

describe("GET /api/issues/:id/recovery-actions", () => {
  it("R-UI-1, R-RR-4: lists the hold with its run and lease ids; the controller's host and pid only for runtime:manage, the owner token only for runtime:confirm_owner_stop", async () => {
    const h = await hold();
    const memberKey = (await insertBoardKey(db(), world.companyA.id, world.users.member.id)).secret;
    const list = async (key: string) => {
      const res = await call(listRecoveryActions, h.issueId, { path: `/api/issues/${h.issueId}/recovery-actions`, headers: bearer(key) });
      expect(res.status).toBe(200);
      const payload = (await res.json()) as { actions: { id: string; runId: string; leaseId: string | null; evidence: Record<string, unknown> }[] };
      const action = payload.actions.find((a) => a.id === h.actionId);
      if (!action) throw new Error("the hold is not listed");
      return action;
    };
    const asMember = await list(memberKey);
    expect(asMember.runId).toBe(h.runId);
    expect(JSON.stringify(asMember)).not.toContain(h.receipt.token);
    expect(JSON.stringify(asMember)).not.toContain(h.receipt.host);
    expect(asMember.evidence).toMatchObject({ owner: "redacted", ownerToken: "redacted" });
    const asManager = await list(managerKey);
    expect(asManager.evidence).toMatchObject({ owner: { host: h.receipt.host, pid: h.receipt.pid }, ownerToken: "redacted" });
    const asOwner = await list(ownerKey);
    expect(asOwner.evidence).toMatchObject({ owner: { host: h.receipt.host }, ownerToken: h.receipt.token });
  });
});
