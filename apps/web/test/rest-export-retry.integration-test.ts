// The export-only retry through the documented REST route and the tRPC mutation (R-EX-2, R-EX-3)
// against real export-retry holds (export-hold-fixture: a real local sandbox under the console's
// COPYBACK_HOME, stopped by the provider): 200 with the action, run and lease ids and the same
// answer for a duplicate, 409 refusals with stable codes and nothing written, 403, 404, 422.
import { access, rename } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { createLocalProvider } from "@copyback/core/providers";
import { POST as retryWorkspaceExport } from "~/app/api/issues/[id]/recovery-actions/retry-workspace-export/route";
import { POST as resolveRecoveryAction } from "~/app/api/issues/[id]/recovery-actions/resolve/route";
import { bearer, buildAuthWorld, configureWebApp, disconnectWebApp, insertBoardKey, json, request, type AuthWorld, type Call } from "./auth-fixture";
import { createExportHold, exportHoldInstanceRoot, exportRetryReadmitted, type ExportHold } from "./export-hold-fixture";

const testDb = useTestDatabase();
const db = () => testDb.prisma();
let world: AuthWorld;
let managerKey: string;
let memberKey: string;

beforeAll(async () => {
  await exportHoldInstanceRoot();
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(db());
  managerKey = (await insertBoardKey(db(), world.companyA.id, world.users.manager.id)).secret;
  memberKey = (await insertBoardKey(db(), world.companyA.id, world.users.member.id)).secret;
});
afterAll(disconnectWebApp);

type Handler = (req: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response>;
const call = (handler: Handler, issueId: string, c: Call) => handler(request(c), { params: Promise.resolve({ id: issueId }) });
const hold = () => createExportHold(db(), { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: world.a.environment.id });
const NOTE = "Restored the sandbox's network route; no file in the sandbox was touched.";
const body = (h: ExportHold, overrides: Record<string, unknown> = {}) => ({ actionId: h.actionId, runId: h.runId, repairNote: NOTE, ...overrides });
const retry = (h: ExportHold, payload: unknown, key = managerKey) =>
  call(retryWorkspaceExport, h.issueId, { path: `/api/issues/${h.issueId}/recovery-actions/retry-workspace-export`, body: payload, headers: bearer(key) });

/** Everything a retry could write. */
async function state(h: ExportHold) {
  return JSON.stringify({
    run: await db().heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } }),
    coordinator: await db().nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } }),
    lease: await db().environmentLease.findUniqueOrThrow({ where: { id: h.leaseId } }),
    action: await db().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } }),
    activity: await db().activityLog.count({ where: { entityId: h.actionId } }),
  });
}

describe("POST /api/issues/:id/recovery-actions/retry-workspace-export", () => {
  it("R-EX-2 a runtime manager's retry answers 200 with the action, run and lease ids; the sandbox is resumed and the run re-admitted; a duplicate answers the same and writes nothing", async () => {
    const h = await hold();
    const first = await retry(h, body(h));
    expect(first.status).toBe(200);
    const answer = await json(first);
    expect(answer).toEqual({ actionId: h.actionId, runId: h.runId, leaseId: h.leaseId, requestId: expect.any(String), status: "readmitted", retryState: "readmitted" });
    expect(await db().nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } })).toMatchObject({ phase: "result_accepted" });
    expect(await db().heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } })).toMatchObject({ status: "running", errorCode: null });
    const local = createLocalProvider({ instanceRoot: h.instanceRoot, isolation: "none" });
    expect((await local.inspect!({ leaseId: h.leaseId, pluginId: "builtin.local", providerLeaseId: h.providerLeaseId })).state).toBe("running");
    // The lease keeps the retry's stop-only intent until the commit's release (R-EX-4).
    expect(await db().environmentLease.findUniqueOrThrow({ where: { id: h.leaseId } })).toMatchObject({ status: "pending_cleanup", metadata: { sandboxStopAndRetain: { requestId: expect.any(String) } } });
    const action = await db().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } });
    expect(action).toMatchObject({ status: "active", evidence: { exportRetry: { state: "readmitted", repairNote: NOTE, actor: { type: "user", id: world.users.manager.id } } } });

    const before = await state(h);
    const repeat = await retry(h, body(h));
    expect(repeat.status).toBe(200);
    expect(await json(repeat)).toEqual({ ...(answer as object), status: "already_requested" });
    expect(await state(h)).toBe(before);
  });

  it("R-EX-3 an unavailable sandbox answers 409 sandbox_unavailable and writes nothing; a closed action 409; another run 422", async () => {
    const h = await hold();
    const root = path.join(h.instanceRoot, "sandboxes", h.providerLeaseId);
    await rename(root, `${root}.away`);
    const before = await state(h);
    const missing = await retry(h, body(h));
    expect(missing.status).toBe(409);
    expect(await json(missing)).toMatchObject({ code: "sandbox_unavailable", details: { actionId: h.actionId, runId: h.runId } });
    expect(await state(h)).toBe(before);
    await rename(`${root}.away`, root);

    const other = await retry(h, body(h, { runId: "00000000-0000-4000-8000-000000000000" }));
    expect(other.status).toBe(422);
    expect(await json(other)).toMatchObject({ code: "run_mismatch" });
    expect(await state(h)).toBe(before);
    expect(await exportRetryReadmitted(db(), h.runId)).toBe(false);
  });

  it("R-EX-2 only runtime:manage: a member gets 403 and nothing is written; a bad body 422; an unknown action 404", async () => {
    const h = await hold();
    const before = await state(h);
    expect((await retry(h, body(h), memberKey)).status).toBe(403);
    const blank = await retry(h, body(h, { repairNote: "   " }));
    expect(blank.status).toBe(422);
    expect(await json(blank)).toMatchObject({ code: "invalid_request" });
    expect((await retry(h, { actionId: h.actionId, runId: h.runId })).status).toBe(422);
    expect((await retry(h, body(h, { actionId: "00000000-0000-4000-8000-000000000000" }))).status).toBe(404);
    expect(await state(h)).toBe(before);
    await access(path.join(h.instanceRoot, "sandboxes", h.providerLeaseId, "workspace", "report.txt"));
  });

  it("R-EX-3 generic resolution cannot stand in for the export-only retry: 409 hold_requires_export_retry", async () => {
    const h = await hold();
    const before = await state(h);
    const response = await call(resolveRecoveryAction, h.issueId, {
      path: `/api/issues/${h.issueId}/recovery-actions/resolve`,
      body: {
        actionId: h.actionId,
        outcome: "false_positive",
        note: "trying to skip the retry",
        sourceIssueStatus: "blocked",
        executionReconciliation: { runId: h.runId, leaseId: h.leaseId, runStatus: "failed", noExternalActionsPerformed: false },
      },
      headers: bearer(managerKey),
    });
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "hold_requires_export_retry" });
    expect(await state(h)).toBe(before);
  });
});
