// R-PV-1 in the console: an agent-pack verification hold as core's dispatch leaves it (the run back
// in the queue, held by the board-owned action runner_remote_provider_verification_unavailable,
// opened by core's writer), read through recovery.forIssue by each role, and resolved through the
// re-verify form's mutation (recovery.resolve with outcome "reverify"). Real database.
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import type { Principal } from "@copyback/core/auth";
import {
  AGENT_PACK_VERIFICATION_KEY,
  AGENT_PACK_VERIFICATION_SCHEMA,
  openPackVerificationUnavailableAction,
  PACK_VERIFICATION_UNAVAILABLE_CAUSE,
  readPackVerification,
} from "@copyback/core/records";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configureWebApp, disconnectWebApp } from "./auth-fixture";
import { buildWorld, callerFor, rejection, type World } from "./routers-fixture";

const database = useTestDatabase();
const db = () => database.prisma();
let w: World;
let environmentId: string;
let issueNumber = 81_000;

beforeAll(async () => {
  configureWebApp(database.url(), "authenticated");
  w = await buildWorld(db());
  environmentId = (await db().environment.create({ data: { companyId: w.companyA.id, name: "Local", provider: "local", pluginId: "builtin.local" } })).id;
});
afterAll(disconnectWebApp);

const RAW_PROVIDER_ERROR = "connect ECONNREFUSED 10.20.30.40:443";

/** A held run: queued, two inconclusive reads recorded, the hold opened by core's writer. */
async function packHold() {
  const number = ++issueNumber;
  const issue = await db().issue.create({
    data: { companyId: w.companyA.id, number, identifier: `ACME-${number}`, title: `Pack ${number}`, status: "in_progress", statusVersion: 1, assigneeAgentId: w.agentA.id },
  });
  await db().agent.update({ where: { id: w.agentA.id }, data: { environmentId } });
  const reads = [
    { at: "2026-12-07T03:00:00.000Z", leaseId: null, outcome: "inconclusive" as const, reason: "timeout", detail: "No answer within the 30 s transport timeout." },
    { at: "2026-12-07T03:00:31.000Z", leaseId: null, outcome: "inconclusive" as const, reason: "transport_error", detail: RAW_PROVIDER_ERROR },
  ];
  const run = await db().heartbeatRun.create({ data: { companyId: w.companyA.id, agentId: w.agentA.id, nativeIssueId: issue.id, status: "queued", runtimeMode: "native" } });
  await db().issue.update({ where: { id: issue.id }, data: { executionRunId: run.id, checkoutRunId: run.id } });
  const { actionId } = await withTransaction(db(), (tx) =>
    openPackVerificationUnavailableAction(tx, {
      companyId: w.companyA.id,
      issueId: issue.id,
      runId: run.id,
      lastLeaseId: null,
      pluginId: "builtin.local",
      pack: { directory: "/opt/packs/testrt", runtime: "testrt", version: "1.4.2", digest: "a".repeat(64) },
      reads,
    }),
  );
  await db().heartbeatRun.update({
    where: { id: run.id },
    data: { runnerProfileJson: { [AGENT_PACK_VERIFICATION_KEY]: { schema: AGENT_PACK_VERIFICATION_SCHEMA, inconclusive: 2, reads, renewals: [], held: { actionId, at: reads[1]!.at } } } },
  });
  return { issueId: issue.id, runId: run.id, actionId };
}

const as = (principal: Principal) => callerFor(db(), principal);

describe("the agent-pack verification hold in the console", () => {
  it("R-PV-1 a member sees the quiet notice only; a runtime manager gets Recovery details with the re-verify form's data, no file form and no raw provider error", async () => {
    const h = await packHold();
    const member = await as(w.principals.member).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    expect(member.details).toBeNull();
    expect(member.notice).toMatchObject({ kind: "attention", runId: h.runId, cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE, message: expect.stringContaining("waiting to start") });

    const manager = await as(w.principals.manager).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    expect(manager.details).toHaveLength(1);
    const details = manager.details![0]!;
    expect(details).toMatchObject({ cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE, causeInWords: expect.stringContaining("Agent pack"), fileSource: null, runId: h.runId });
    expect(details.packHold).toEqual({
      runId: h.runId,
      runStatus: "queued",
      sourceIssueStatus: "in_progress",
      pack: { runtime: "testrt", version: "1.4.2" },
      reads: [
        { at: "2026-12-07T03:00:00.000Z", reason: "timeout", reasonInWords: "No answer within the 30-second limit" },
        { at: "2026-12-07T03:00:31.000Z", reason: "transport_error", reasonInWords: "The connection to the sandbox failed" },
      ],
    });
    expect(JSON.stringify(manager)).not.toContain("10.20.30.40");
  });

  it("R-PV-1 the form's reverify renews the held run's budget; a member may not send it, and a second one is already resolved", async () => {
    const h = await packHold();
    const body = {
      companyId: w.companyA.id,
      issueId: h.issueId,
      actionId: h.actionId,
      outcome: "reverify" as const,
      sourceIssueStatus: "in_progress" as const,
      executionReconciliation: { runId: h.runId, leaseId: null, runStatus: "queued" as const, noExternalActionsPerformed: false },
      note: "The provider's API answers again.",
    };
    expect(await rejection(as(w.principals.member).recovery.resolve(body))).toMatchObject({ code: "FORBIDDEN" });
    expect(await as(w.principals.manager).recovery.resolve(body)).toMatchObject({ actionId: h.actionId, runId: h.runId, outcome: "reverify", status: "resolved", leaseIds: [] });
    const run = await db().heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } });
    expect(run.status).toBe("queued");
    expect(readPackVerification(run.runnerProfileJson)).toMatchObject({ inconclusive: 0, held: null, renewals: [{ actionId: h.actionId }] });
    expect(await as(w.principals.manager).recovery.resolve(body)).toMatchObject({ status: "already_resolved" });
    const after = await as(w.principals.manager).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    expect(after.details).toEqual([]);
    expect(after.notice).toEqual({ kind: "none" });
  });
});
