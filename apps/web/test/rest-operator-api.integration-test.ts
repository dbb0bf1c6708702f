// The REST operator API through its real route handlers: authentication (session cookie, board
// and agent keys), the status codes 401/403/404/409/422/501 with their stable codes, cross-company
// access, CSRF, R-RR-4's read endpoints and R-ATT-2's attestation permission (the attestation's
// own admission is in rest-attestation.integration-test.ts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { POST as authPOST } from "~/app/api/auth/[...all]/route";
import { GET as trpcGET } from "~/app/api/trpc/[trpc]/route";
import { GET as listRecoveryActions } from "~/app/api/issues/[id]/recovery-actions/route";
import { POST as resumeWorkspaceFinalization } from "~/app/api/issues/[id]/recovery-actions/resume-workspace-finalization/route";
import { POST as retryWorkspaceExport } from "~/app/api/issues/[id]/recovery-actions/retry-workspace-export/route";
import { POST as resolveRecoveryAction } from "~/app/api/issues/[id]/recovery-actions/resolve/route";
import { createFileHold, fileHoldState, restoredBody } from "./file-hold-fixture";
import { createDestroyedSource, createExportHold } from "./export-hold-fixture";
import { POST as reconstructWorkspace } from "~/app/api/issues/[id]/recovery-actions/reconstruct-workspace/route";
import { GET as getLease } from "~/app/api/environment-leases/[leaseId]/route";
import { GET as getRun } from "~/app/api/runs/[id]/route";
import { POST as finishRun } from "~/app/api/runs/[id]/finish/route";
import {
  CONSOLE_COOKIE,
  CROSS_SITE,
  PASSWORD,
  SAME_ORIGIN,
  bearer,
  buildAuthWorld,
  configureWebApp,
  cookieHeaderFrom,
  disconnectWebApp,
  insertAgentKey,
  insertBoardKey,
  json,
  request,
  type AuthWorld,
  type Call,
} from "./auth-fixture";
import { createOwnerHold, type OwnerHold } from "./recovery-fixture";

const testDb = useTestDatabase();
let world: AuthWorld;
let ipCounter = 0;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
});
afterAll(disconnectWebApp);

type Handler = (req: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;

function call(handler: Handler, params: Record<string, string>, c: Call): Promise<Response> {
  return handler(request(c), { params: Promise.resolve(params) });
}

async function sessionCookie(email: string): Promise<string> {
  const response = await authPOST(request({ path: "/api/auth/sign-in/email", body: { email, password: PASSWORD }, headers: { ...SAME_ORIGIN, "x-forwarded-for": `198.51.100.${++ipCounter}` } }));
  expect(response.status).toBe(200);
  return cookieHeaderFrom(response);
}

const resumeBody = () => ({
  actionId: world.a.newerIncident.id,
  runId: world.a.run.id,
  ownerToken: "owner-token-1",
  controllerAndCopybackStopped: true,
  stopEvidence: "platform console: controller pod and copyback children terminated at 10:02",
});

function resume(headers: Record<string, string>, issueId = world.a.issue.id, body: unknown = resumeBody()) {
  return call(resumeWorkspaceFinalization, { id: issueId }, { path: `/api/issues/${issueId}/recovery-actions/resume-workspace-finalization`, body, headers });
}

/** A real unverified-owner hold of company A (or B): an admitted attestation answers 200. */
function ownerHold(company: "a" | "b" = "a"): Promise<OwnerHold> {
  const place = company === "a" ? { companyId: world.companyA.id, ...world.a } : { companyId: world.companyB.id, ...world.b };
  return createOwnerHold(testDb.prisma(), { companyId: place.companyId, agentId: place.agent.id, environmentId: place.environment.id });
}

/** Attests `hold` exactly as Recovery details prefill it. */
function resumeHold(headers: Record<string, string>, hold: OwnerHold) {
  return resume(headers, hold.issueId, {
    actionId: hold.actionId,
    runId: hold.runId,
    ownerToken: hold.receipt.token,
    controllerAndCopybackStopped: true,
    stopEvidence: "platform console: controller pod and copyback children terminated at 10:02",
  });
}

describe("401: who is asking", () => {
  it("refuses a request without credentials (unauthenticated)", async () => {
    const response = await call(getRun, { id: world.a.run.id }, { path: `/api/runs/${world.a.run.id}` });
    expect(response.status).toBe(401);
    expect(await json(response)).toMatchObject({ code: "unauthenticated" });
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("refuses unknown, malformed, expired and revoked keys with invalid_api_key (never as anonymous)", async () => {
    const expired = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id, { expiresAt: new Date(Date.now() - 1000) });
    const revoked = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id, { revokedAt: new Date() });
    const revokedAgent = await insertAgentKey(testDb.prisma(), world.companyA.id, world.a.agent.id, { revokedAt: new Date() });
    for (const authorization of [
      `Bearer cbk_${"A".repeat(43)}`,
      "Bearer not-a-key",
      "Basic dXNlcjpwYXNz",
      `Bearer ${expired.secret}`,
      `Bearer ${revoked.secret}`,
      `Bearer ${revokedAgent.secret}`,
    ]) {
      const response = await call(getRun, { id: world.a.run.id }, { path: `/api/runs/${world.a.run.id}`, headers: { authorization } });
      expect(response.status, authorization).toBe(401);
      expect(await json(response)).toMatchObject({ code: "invalid_api_key" });
    }
  });

  it("tRPC answers a bad key the same way: 401 with domain code invalid_api_key", async () => {
    const revoked = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id, { revokedAt: new Date() });
    const response = await trpcGET(request({ path: "/api/trpc/me.get", headers: bearer(revoked.secret) }));
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { json: { data: { code: string; domainCode: string } } } };
    expect(body.error.json.data).toMatchObject({ code: "UNAUTHORIZED", domainCode: "invalid_api_key" });
  });

  it("a key stops working the moment it is revoked", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    const path = `/api/runs/${world.a.run.id}`;
    expect((await call(getRun, { id: world.a.run.id }, { path, headers: bearer(key.secret) })).status).toBe(200);
    await testDb.prisma().boardApiKey.update({ where: { id: key.id }, data: { revokedAt: new Date() } });
    const after = await call(getRun, { id: world.a.run.id }, { path, headers: bearer(key.secret) });
    expect(after.status).toBe(401);
    expect(await json(after)).toMatchObject({ code: "invalid_api_key" });
  });

  it("records when a key was last used, at most once a minute", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    const path = `/api/runs/${world.a.run.id}`;
    await call(getRun, { id: world.a.run.id }, { path, headers: bearer(key.secret) });
    const first = (await testDb.prisma().boardApiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt;
    expect(first).not.toBeNull();
    await call(getRun, { id: world.a.run.id }, { path, headers: bearer(key.secret) });
    const second = (await testDb.prisma().boardApiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt;
    expect(second?.getTime()).toBe(first?.getTime());
  });
});

describe("404: what does not exist, or is another company's", () => {
  it("answers not_found for a missing or malformed id, after authentication", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    for (const id of ["00000000-0000-4000-8000-000000000000", "not-a-uuid"]) {
      const response = await call(getRun, { id }, { path: `/api/runs/${id}`, headers: bearer(key.secret) });
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ code: "not_found" });
    }
  });

  it("a key of company A asking for company B's issue, run or lease reads not found, though its user is a member of B", async () => {
    const keyA = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    const responses = [
      await call(listRecoveryActions, { id: world.b.issue.id }, { path: `/api/issues/${world.b.issue.id}/recovery-actions`, headers: bearer(keyA.secret) }),
      await call(getRun, { id: world.b.run.id }, { path: `/api/runs/${world.b.run.id}`, headers: bearer(keyA.secret) }),
      await call(getLease, { leaseId: world.b.lease.id }, { path: `/api/environment-leases/${world.b.lease.id}`, headers: bearer(keyA.secret) }),
    ];
    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(await json(response)).toMatchObject({ code: "not_found" });
    }
  });

  it("a session of company B's owner asking for company A's issue reads not found; the same session reads B's", async () => {
    const cookie = await sessionCookie(world.users.otherOwner.email);
    const other = await call(listRecoveryActions, { id: world.a.issue.id }, { path: `/api/issues/${world.a.issue.id}/recovery-actions`, headers: { cookie } });
    expect(other.status).toBe(404);
    const own = await call(listRecoveryActions, { id: world.b.issue.id }, { path: `/api/issues/${world.b.issue.id}/recovery-actions`, headers: { cookie } });
    expect(own.status).toBe(200);
  });

  it("a mutation on another company's issue is not found before its body is even read", async () => {
    const keyA = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    const response = await resume(bearer(keyA.secret), world.b.issue.id, { nonsense: true });
    expect(response.status).toBe(404);
  });
});

describe("403: seen but not allowed", () => {
  it("refuses a member a runtime:manage route with forbidden", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.member.id);
    const response = await call(retryWorkspaceExport, { id: world.a.issue.id }, {
      path: `/api/issues/${world.a.issue.id}/recovery-actions/retry-workspace-export`,
      body: { actionId: world.a.olderHold.id, runId: world.a.run.id, repairNote: "restored transport" },
      headers: bearer(key.secret),
    });
    expect(response.status).toBe(403);
    expect(await json(response)).toMatchObject({ code: "forbidden" });
  });

  it("refuses a suspended member's key", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.suspended.id);
    const response = await call(getRun, { id: world.a.run.id }, { path: `/api/runs/${world.a.run.id}`, headers: bearer(key.secret) });
    expect(response.status).toBe(403);
  });

  it("refuses an instance administrator's key outside its company's membership: keys carry no instance-wide authority", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.instanceAdmin.id);
    const response = await call(getRun, { id: world.a.run.id }, { path: `/api/runs/${world.a.run.id}`, headers: bearer(key.secret) });
    expect(response.status).toBe(404);
  });

  it("refuses agents the board's read endpoints", async () => {
    const key = await insertAgentKey(testDb.prisma(), world.companyA.id, world.a.agent.id);
    const response = await call(listRecoveryActions, { id: world.a.issue.id }, { path: `/api/issues/${world.a.issue.id}/recovery-actions`, headers: bearer(key.secret) });
    expect(response.status).toBe(403);
  });
});

describe("422: invalid bodies", () => {
  it("answers invalid_request with the zod issues, after authorization", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    const response = await resume(bearer(key.secret), world.a.issue.id, { ...resumeBody(), controllerAndCopybackStopped: false, runId: "nope" });
    expect(response.status).toBe(422);
    const body = await json(response);
    expect(body.code).toBe("invalid_request");
    const paths = (body.issues as Array<{ path: string[] }>).map((i) => i.path.join("."));
    expect(paths).toEqual(expect.arrayContaining(["runId", "controllerAndCopybackStopped"]));
  });

  it("answers invalid_request for malformed JSON and an empty body", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    for (const rawBody of ["{not json", ""]) {
      const response = await call(resumeWorkspaceFinalization, { id: world.a.issue.id }, {
        method: "POST",
        path: `/api/issues/${world.a.issue.id}/recovery-actions/resume-workspace-finalization`,
        rawBody,
        headers: bearer(key.secret),
      });
      expect(response.status).toBe(422);
      expect(await json(response)).toMatchObject({ code: "invalid_request" });
    }
  });

  it("R-RR-5 requires the repair fields when a resolution says restored; a complete one resolves the exact action and lease ids and changes nothing else", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.manager.id);
    const hold = await createFileHold(testDb.prisma(), { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: world.a.environment.id });
    const path = `/api/issues/${hold.issueId}/recovery-actions/resolve`;
    for (const incompleteBody of [
      { actionId: hold.actionId, outcome: "restored" },
      { ...restoredBody(hold), workspaceRepairEvidence: undefined },
      { ...restoredBody(hold), outcome: "false_positive", workspaceRepairEvidence: undefined },
      { ...restoredBody(hold), executionReconciliation: { runId: hold.runId, disposition: "kept" } },
    ]) {
      const incomplete = await call(resolveRecoveryAction, { id: hold.issueId }, { path, body: incompleteBody, headers: bearer(key.secret) });
      expect(incomplete.status).toBe(422);
    }
    const before = await fileHoldState(testDb.prisma(), hold);
    const changed = await call(resolveRecoveryAction, { id: hold.issueId }, { path, body: restoredBody(hold, { sourceIssueStatus: "todo" }), headers: bearer(key.secret) });
    expect(changed.status).toBe(409);
    expect(await json(changed)).toMatchObject({ code: "source_status_changed" });
    const complete = await call(resolveRecoveryAction, { id: hold.issueId }, { path, body: restoredBody(hold), headers: bearer(key.secret) });
    expect(complete.status).toBe(200);
    expect(await json(complete)).toEqual({ actionId: hold.actionId, runId: hold.runId, leaseIds: [hold.leaseId], outcome: "restored", status: "resolved" });
    expect(await fileHoldState(testDb.prisma(), hold)).toEqual(before);
    // R-RR-5: board operators only; a plain member is refused and nothing changes.
    const other = await createFileHold(testDb.prisma(), { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: world.a.environment.id }, "cancelled_native");
    const memberKey = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.member.id);
    const refused = await call(resolveRecoveryAction, { id: other.issueId }, { path: `/api/issues/${other.issueId}/recovery-actions/resolve`, body: restoredBody(other), headers: bearer(memberKey.secret) });
    expect(refused.status).toBe(403);
    expect((await testDb.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: other.actionId } })).status).toBe("active");
  });

  it("R-RC-2 R-RC-3 the reconstruction route: 422 for a bad body, 201 with the recorded intent, 200 adopting it on a repeat, 409 for a retained sandbox, 403 for a member (nothing written)", async () => {
    const prisma = testDb.prisma();
    const key = await insertBoardKey(prisma, world.companyA.id, world.users.manager.id);
    const place = { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: world.a.environment.id };
    const source = await createDestroyedSource(prisma, place);
    const path = `/api/issues/${source.issueId}/recovery-actions/reconstruct-workspace`;
    const body = {
      actionId: source.actionId,
      sourceRunId: source.runId,
      leaseId: source.leaseId,
      attachmentIds: source.attachmentIds,
      description: "Rebuild the README changes",
      externalActionOutcomes: [{ action: "opened a pull request", outcome: "not_performed" }],
      sourceStatusVersion: 2,
      requestId: "req-1",
    };
    const bad = await call(reconstructWorkspace, { id: source.issueId }, { path, body: { actionId: source.actionId }, headers: bearer(key.secret) });
    expect(bad.status).toBe(422);

    // R-UI-3: a member without runtime:manage is refused and nothing is written.
    const memberKey = await insertBoardKey(prisma, world.companyA.id, world.users.member.id);
    const refused = await call(reconstructWorkspace, { id: source.issueId }, { path, body, headers: bearer(memberKey.secret) });
    expect(refused.status).toBe(403);
    expect(await prisma.reconstructionIntent.count({ where: { recoveryActionId: source.actionId } })).toBe(0);

    const recorded = await call(reconstructWorkspace, { id: source.issueId }, { path, body, headers: bearer(key.secret) });
    expect(recorded.status).toBe(201);
    const answer = await json(recorded);
    expect(answer).toMatchObject({ kind: "recorded", intent: { status: "pending", actionId: source.actionId, sourceRunId: source.runId, leaseId: source.leaseId, attachmentHashes: [{ attachmentId: source.attachmentIds[0], sizeBytes: 37 }] } });
    const again = await call(reconstructWorkspace, { id: source.issueId }, { path, body, headers: bearer(key.secret) });
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual({ ...answer, kind: "adopted" });
    expect(await prisma.reconstructionIntent.count({ where: { recoveryActionId: source.actionId } })).toBe(1);

    // R-RC-1: a retained sandbox is refused with its stable code; R-RC-2: an attachment of another task is 422.
    const retained = await createExportHold(prisma, place);
    const retainedPath = `/api/issues/${retained.issueId}/recovery-actions/reconstruct-workspace`;
    const held = await call(reconstructWorkspace, { id: retained.issueId }, { path: retainedPath, body: { ...body, actionId: retained.actionId, sourceRunId: retained.runId, leaseId: retained.leaseId, attachmentIds: [], requestId: "req-2" }, headers: bearer(key.secret) });
    expect(held.status).toBe(409);
    expect(await json(held)).toMatchObject({ code: "source_not_destroyed" });
    const other = await createDestroyedSource(prisma, place);
    const foreign = await call(reconstructWorkspace, { id: other.issueId }, {
      path: `/api/issues/${other.issueId}/recovery-actions/reconstruct-workspace`,
      body: { ...body, actionId: other.actionId, sourceRunId: other.runId, leaseId: other.leaseId, attachmentIds: source.attachmentIds, requestId: "req-3" },
      headers: bearer(key.secret),
    });
    expect(foreign.status).toBe(422);
    expect(await json(foreign)).toMatchObject({ code: "foreign_attachment" });
    expect(await prisma.reconstructionIntent.count({ where: { recoveryActionId: { in: [retained.actionId, other.actionId] } } })).toBe(0);
  });
});

describe("R-RR-4: recovery actions and leases", () => {
  it("R-RR-4: lists an older repair hold beside a newer incident, with the exact lease ids", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.member.id);
    const response = await call(listRecoveryActions, { id: world.a.issue.id }, { path: `/api/issues/${world.a.issue.id}/recovery-actions`, headers: bearer(key.secret) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { issueId: string; actions: Array<{ id: string; leaseId: string | null; runId: string | null; open: boolean; cause: string }> };
    expect(body.issueId).toBe(world.a.issue.id);
    expect(body.actions.map((a) => a.id).sort()).toEqual([world.a.olderHold.id, world.a.newerIncident.id].sort());
    const hold = body.actions.find((a) => a.id === world.a.olderHold.id);
    expect(hold).toMatchObject({ leaseId: world.a.lease.id, runId: world.a.run.id, open: true });
    // Nothing of company B leaks in.
    expect(body.actions.some((a) => a.id === world.b.olderHold.id)).toBe(false);
  });

  it("R-RR-4: shows the exact lease", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.manager.id);
    const response = await call(getLease, { leaseId: world.a.lease.id }, { path: `/api/environment-leases/${world.a.lease.id}`, headers: bearer(key.secret) });
    expect(response.status).toBe(200);
    const { lease } = (await response.json()) as { lease: Record<string, unknown> };
    expect(lease).toMatchObject({ id: world.a.lease.id, companyId: world.companyA.id, leasePolicy: "retain_on_failure", status: "released", pluginId: "builtin.fake", runId: world.a.run.id });
  });

  it("shows a run with its issue", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.member.id);
    const response = await call(getRun, { id: world.a.run.id }, { path: `/api/runs/${world.a.run.id}`, headers: bearer(key.secret) });
    expect(response.status).toBe(200);
    const { run } = (await response.json()) as { run: Record<string, unknown> };
    expect(run).toMatchObject({ id: world.a.run.id, issueId: world.a.issue.id, status: "failed", runtimeMode: "native", finalization: null });
    expect(run).not.toHaveProperty("controllerPid");
  });
});

describe("R-ATT-2: who may attest an owner stop (resume-workspace-finalization)", () => {
  it("R-ATT-2: admits active owners and administrators (sessions and keys): the request passes every check", async () => {
    const ownerKey = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    const adminCookie = await sessionCookie(world.users.admin.email);
    for (const headers of [bearer(ownerKey.secret), { ...SAME_ORIGIN, cookie: adminCookie }]) {
      const response = await resumeHold(headers, await ownerHold());
      expect(response.status).toBe(200);
      expect(await json(response)).toMatchObject({ status: "attested" });
    }
  });

  it("R-ATT-2: admits instance administrators, member or not", async () => {
    const cookie = await sessionCookie(world.users.instanceAdmin.email);
    expect((await resumeHold({ ...SAME_ORIGIN, cookie }, await ownerHold("a"))).status).toBe(200);
    expect((await resumeHold({ ...SAME_ORIGIN, cookie }, await ownerHold("b"))).status).toBe(200);
  });

  it("R-ATT-2: admitted past authorization, an action without a readable owner answers the domain's 409, not a 403", async () => {
    // The world's incident carries no owner evidence: it names no receipt an attestation could
    // release (such a hold is answered as one that predates receipt hashes).
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    const response = await resume(bearer(key.secret));
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "owner_receipt_malformed" });
  });

  it("R-ATT-2: refuses runtime managers (they hold runtime:manage, not runtime:confirm_owner_stop)", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.manager.id);
    const cookie = await sessionCookie(world.users.manager.email);
    for (const headers of [bearer(key.secret), { ...SAME_ORIGIN, cookie }]) {
      const response = await resume(headers);
      expect(response.status).toBe(403);
      expect(await json(response)).toMatchObject({ code: "forbidden" });
    }
    // The same runtime manager may retry an export (runtime:manage).
    const retry = await call(retryWorkspaceExport, { id: world.a.issue.id }, {
      path: `/api/issues/${world.a.issue.id}/recovery-actions/retry-workspace-export`,
      body: { actionId: world.a.olderHold.id, runId: world.a.run.id, repairNote: "restored transport" },
      headers: bearer(key.secret),
    });
    // Authorized: past the permission check, the service answers about the action itself (this
    // hold is not an export-retry hold, or the console has no instance root to reach a sandbox).
    expect(retry.status).not.toBe(403);
    expect(await json(retry)).toMatchObject({ code: expect.stringMatching(/^(action_not_export_retry|instance_root_unknown)$/) });
  });

  it("R-ATT-2: refuses agents, even of the company", async () => {
    const key = await insertAgentKey(testDb.prisma(), world.companyA.id, world.a.agent.id);
    const response = await resume(bearer(key.secret));
    expect(response.status).toBe(403);
  });

  it("R-ATT-2: refuses members and suspended owners", async () => {
    const member = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.member.id);
    expect((await resume(bearer(member.secret))).status).toBe(403);
    const suspendedOwner = await testDb.prisma().user.create({ data: { name: "Former", email: `former.${world.tag}@auth.example` } });
    await testDb.prisma().companyMembership.create({ data: { companyId: world.companyA.id, userId: suspendedOwner.id, role: "owner", status: "suspended" } });
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, suspendedOwner.id);
    expect((await resume(bearer(key.secret))).status).toBe(403);
  });

  it("R-ATT-2: admits the trusted local board (local mode)", async () => {
    configureWebApp(testDb.url(), "local");
    try {
      const hold = await ownerHold();
      const response = await resumeHold({ ...SAME_ORIGIN, ...CONSOLE_COOKIE, host: "127.0.0.1:3100", origin: "http://127.0.0.1:3100" }, hold);
      expect(response.status).toBe(200);
    } finally {
      configureWebApp(testDb.url(), "authenticated");
    }
  });
});

describe("POST /api/runs/:id/finish: the run's own agent only", () => {
  const finish = (headers: Record<string, string>, runId = world.a.run.id) =>
    call(finishRun, { id: runId }, { path: `/api/runs/${runId}/finish`, body: { dedupeKey: "d-1", result: { summary: "done" } }, headers });

  it("admits the run's own agent past authorization (this failed run then accepts no result: 409)", async () => {
    const key = await insertAgentKey(testDb.prisma(), world.companyA.id, world.a.agent.id);
    const response = await finish(bearer(key.secret));
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "run_not_accepting_results" });
  });

  it("refuses another agent of the same company (not_run_agent) and reads another company's agent as not found", async () => {
    const sibling = await insertAgentKey(testDb.prisma(), world.companyA.id, world.secondAgentA.id);
    const refused = await finish(bearer(sibling.secret));
    expect(refused.status).toBe(403);
    expect(await json(refused)).toMatchObject({ code: "not_run_agent" });
    const foreign = await insertAgentKey(testDb.prisma(), world.companyB.id, world.b.agent.id);
    expect((await finish(bearer(foreign.secret))).status).toBe(404);
  });

  it("refuses board principals, owners included", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    expect((await finish(bearer(key.secret))).status).toBe(403);
  });

  it("refuses an archived agent's key", async () => {
    const agent = await testDb.prisma().agent.create({ data: { companyId: world.companyA.id, name: `Old ${world.tag}`, command: ["/bin/true"], archivedAt: new Date() } });
    const key = await insertAgentKey(testDb.prisma(), world.companyA.id, agent.id);
    const response = await finish(bearer(key.secret));
    expect(response.status).toBe(401);
  });
});

describe("CSRF on REST mutations", () => {
  it("refuses a cross-site POST authenticated by the session cookie", async () => {
    const cookie = await sessionCookie(world.users.owner.email);
    const response = await resume({ ...CROSS_SITE, cookie });
    expect(response.status).toBe(403);
    expect(await json(response)).toMatchObject({ code: "cross_site_request" });
  });

  it("allows the same cross-site POST with a bearer key (browsers never attach one by themselves)", async () => {
    const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.owner.id);
    const response = await resumeHold({ ...CROSS_SITE, ...bearer(key.secret) }, await ownerHold());
    expect(response.status).toBe(200);
  });

  it("refuses a cross-site POST to the local board, and a page that rebinds its own name to 127.0.0.1", async () => {
    configureWebApp(testDb.url(), "local");
    try {
      expect((await resume({ ...CROSS_SITE, ...CONSOLE_COOKIE, host: "127.0.0.1:3100" })).status).toBe(403);
      // DNS rebinding: same-origin from the browser's point of view, but addressed to the attacker's name.
      const rebound = await resume({ ...CONSOLE_COOKIE, host: "evil.example:3100", origin: "http://evil.example:3100", "sec-fetch-site": "same-origin" });
      expect(rebound.status).toBe(401);
    } finally {
      configureWebApp(testDb.url(), "authenticated");
    }
  });
});
