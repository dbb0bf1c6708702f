// The export holds in the console's tRPC reads, against a real database and real holds:
// a member sees the operator-attention notice without identifiers or any form; a runtime
// manager's Recovery details show the run, lease, provider allocation, stopped receipt, each
// finalization attempt and the exact export-only retry call (REST and CLI); a limit hold names its
// limit and offers no retry call; the company Recovery page lists both holds; the run page lists
// each finalization attempt (for runtime managers only).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import type { Principal } from "@copyback/core/auth";
import {
  openCopybackFailedAction,
  openExportLimitAction,
  COPYBACK_FAILED_CAUSE,
  EXPORT_LIMIT_CAUSE,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
} from "@copyback/core/records";
import {
  resolveRecoveryActionBody,
  REPAIR_NOTE_PLACEHOLDER,
  retryWorkspaceExportBody,
} from "@copyback/core/recovery";
import { configureWebApp, disconnectWebApp, PUBLIC_URL } from "./auth-fixture";
import { createExportHold, exportHoldInstanceRoot, type ExportHold } from "./export-hold-fixture";
import { buildWorld, callerFor, rejection, type World } from "./routers-fixture";

const database = useTestDatabase();
const db = () => database.prisma();
let w: World;
let environmentId: string;

beforeAll(async () => {
  await exportHoldInstanceRoot();
  configureWebApp(database.url(), "authenticated");
  w = await buildWorld(db());
  environmentId = (await db().environment.create({ data: { companyId: w.companyA.id, name: "Local sandbox", provider: "local", pluginId: "builtin.local" } })).id;
});
afterAll(disconnectWebApp);

const as = (principal: Principal) => callerFor(db(), principal);
const exhaustedHold = async () => {
  const h = await createExportHold(db(), { companyId: w.companyA.id, agentId: w.agentA.id, environmentId });
  // The three attempts the budget spent, as the finalizer records them.
  for (const attempt of [1, 2, 3]) {
    await db().workspaceOperation.create({
      data: {
        companyId: w.companyA.id,
        runId: h.runId,
        issueId: h.issueId,
        phase: "workspace_finalize",
        status: "failed",
        errorCode: "provider_export_failed",
        finishedAt: new Date(),
        metadata: attempt === 3 ? { attempt, exhausted: true } : { attempt },
      },
    });
  }
  return h;
};

/** The exhausted hold turned into a limit hold: the same run and lease, the limit's action instead. */
async function limitHold(): Promise<ExportHold> {
  const h = await createExportHold(db(), { companyId: w.companyA.id, agentId: w.agentA.id, environmentId });
  const actionId = await withTransaction(db(), async (tx) => {
    await tx.issueRecoveryAction.update({ where: { id: h.actionId }, data: { status: "resolved", resolvedByType: "system", outcome: "test_replaced" } });
    const opened = await openExportLimitAction(tx, {
      companyId: w.companyA.id,
      issueId: h.issueId,
      runId: h.runId,
      resultId: null,
      leaseId: h.leaseId,
      providerLeaseId: h.providerLeaseId,
      pluginId: "builtin.local",
      failureCode: "native_workspace_sync_out_too_many_entries",
      limit: { kind: "limit", violation: "too_many_entries", limit: "maxEntries", max: 200000, path: "", violationCodes: ["too_many_entries"] },
    });
    return opened.actionId;
  });
  return { ...h, actionId };
}

/** The exhausted hold turned into a copyback-failed hold: the same run and its stopped lease, a failed write after host writes began. */
async function copybackFailedHold(): Promise<ExportHold> {
  const h = await createExportHold(db(), { companyId: w.companyA.id, agentId: w.agentA.id, environmentId });
  const actionId = await withTransaction(db(), async (tx) => {
    await tx.issueRecoveryAction.update({ where: { id: h.actionId }, data: { status: "resolved", resolvedByType: "system", outcome: "test_replaced" } });
    const opened = await openCopybackFailedAction(tx, {
      companyId: w.companyA.id,
      issueId: h.issueId,
      runId: h.runId,
      resultId: null,
      leaseId: h.leaseId,
      providerLeaseId: h.providerLeaseId,
      pluginId: "builtin.local",
      failure: "merge_conflict",
      failureCode: "workspace_merge_conflict",
      hostWritesStarted: false,
      conflictCount: 2,
      conflicts: [
        { path: "src/a.ts", kind: "both_changed" },
        { path: "docs/b.md", kind: "deleted_on_host" },
      ],
      bindingReason: null,
      pin: "already_pinned",
    });
    return opened.actionId;
  });
  return { ...h, actionId };
}

describe("export holds in the console", () => {
  it("R-EX-2 R-UI-2 a member sees the operator-attention notice for an exhausted export: no identifiers, no form, no Recovery details", async () => {
    const h = await exhaustedHold();
    const answer = await as(w.principals.member).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    expect(answer.details).toBeNull();
    expect(answer.notice).toMatchObject({ kind: "attention", actionId: h.actionId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE, message: expect.stringMatching(/operator needs to repair/) });
    const text = JSON.stringify(answer);
    expect(text).not.toContain(h.providerLeaseId);
    expect(text).not.toContain(h.leaseId);
    expect(text).not.toContain("retry-workspace-export");
    expect(text).not.toMatch(/curl|repairNote/);
  });

  it("R-EX-2 a runtime manager's Recovery details show the run, lease, allocation, stopped receipt, each attempt and the exact export-only retry call", async () => {
    const h = await exhaustedHold();
    const answer = await as(w.principals.manager).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    const action = answer.details?.find((d) => d.actionId === h.actionId);
    expect(action?.exportHold).toMatchObject({
      kind: "retry_exhausted",
      run: { id: h.runId, status: "failed", errorCode: "native_workspace_sync_out_retry_exhausted", phase: "terminal_failure", attempt: 3 },
      lease: { id: h.leaseId, status: "released", providerLeaseId: h.providerLeaseId, pluginId: "builtin.local", stopPending: false },
      stoppedReceipt: { method: "environmentStopLease", pluginId: "builtin.local", providerLeaseId: h.providerLeaseId },
      limit: null,
    });
    expect(action?.exportHold?.attempts.map((a) => [a.attempt, a.status, a.failureCode, a.exhausted])).toEqual([
      [1, "failed", "provider_export_failed", false],
      [2, "failed", "provider_export_failed", false],
      [3, "failed", "provider_export_failed", true],
    ]);
    const call = action?.exportHold?.retryCall;
    expect(call?.url).toBe(`${PUBLIC_URL}/api/issues/${h.issueId}/recovery-actions/retry-workspace-export`);
    expect(call?.body).toEqual({ actionId: h.actionId, runId: h.runId, repairNote: REPAIR_NOTE_PLACEHOLDER });
    expect(retryWorkspaceExportBody.safeParse(call?.body).success).toBe(true);
    expect(call?.cli).toContain(`copyback recovery retry-export`);
    expect(call?.cli).toContain(`--issue ${h.issueId} --action ${h.actionId} --run ${h.runId}`);
  });

  it("R-UA-3 a limit hold: members get the attention notice; Recovery details name the limit and offer no export-only retry call", async () => {
    const h = await limitHold();
    const member = await as(w.principals.member).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    expect(member).toMatchObject({ details: null, notice: { kind: "attention", cause: EXPORT_LIMIT_CAUSE } });
    expect(JSON.stringify(member)).not.toMatch(/maxEntries|200000/);
    const manager = await as(w.principals.manager).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    const action = manager.details?.find((d) => d.actionId === h.actionId);
    expect(action).toMatchObject({ causeInWords: "Copying the work back stopped at an archive limit" });
    expect(action?.nextAction).toContain("maxEntries = 200000");
    expect(action?.exportHold).toMatchObject({ kind: "limit", limit: { violation: "too_many_entries", limit: "maxEntries", max: 200000 }, retryCall: null, lease: { id: h.leaseId } });
  });

  it("R-UI-2 a copyback-failed hold: members get the attention notice only; Recovery details show its run, lease, stop receipt, attempts, what failed, whether host writes began, the conflicts and its resolution path", async () => {
    const h = await copybackFailedHold();
    const member = await as(w.principals.member).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    expect(member).toMatchObject({ details: null, notice: { kind: "attention", cause: COPYBACK_FAILED_CAUSE } });
    expect(JSON.stringify(member)).not.toMatch(/src\/a\.ts|recovery-actions\/resolve|curl/);
    expect(JSON.stringify(member)).not.toContain(h.providerLeaseId);

    const manager = await as(w.principals.manager).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });
    const action = manager.details?.find((d) => d.actionId === h.actionId);
    expect(action).toMatchObject({ cause: COPYBACK_FAILED_CAUSE, causeInWords: "Copying the work back failed: files kept for recovery", runId: h.runId, leaseIds: [h.leaseId] });
    expect(action?.nextAction).toMatch(/merge conflict/);
    expect(action?.exportHold).toMatchObject({
      kind: "copyback_failed",
      run: { id: h.runId, status: "failed" },
      lease: { id: h.leaseId, providerLeaseId: h.providerLeaseId, pluginId: "builtin.local", stopPending: false },
      stoppedReceipt: { method: "environmentStopLease", providerLeaseId: h.providerLeaseId },
      retryCall: null,
      copybackFailure: {
        failure: "merge_conflict",
        failureCode: "workspace_merge_conflict",
        hostWritesStarted: false,
        conflictCount: 2,
        conflicts: [
          { path: "src/a.ts", kind: "both_changed" },
          { path: "docs/b.md", kind: "deleted_on_host" },
        ],
      },
    });
    // The resolution path: the guarded resolve call with the task's status now, the run and its lease.
    const issue = await db().issue.findUniqueOrThrow({ where: { id: h.issueId } });
    const call = action?.exportHold?.resolveCall;
    expect(call?.url).toBe(`${PUBLIC_URL}/api/issues/${h.issueId}/recovery-actions/resolve`);
    expect(call?.body).toMatchObject({ actionId: h.actionId, outcome: "restored", sourceIssueStatus: issue.status, executionReconciliation: { runId: h.runId, leaseId: h.leaseId, runStatus: "failed" } });
    expect(resolveRecoveryActionBody.safeParse(call?.body).success).toBe(true);
    expect(call?.dispositionCli).toContain("--outcome false_positive");
    // ... and the file-recovery form's source, as for the other file holds.
    expect(action?.fileSource).toMatchObject({ runId: h.runId, leaseId: h.leaseId, providerLeaseId: h.providerLeaseId, sourceIssueStatus: issue.status });
  });

  it("the company Recovery page lists the export holds with their causes in words", async () => {
    const exhausted = await exhaustedHold();
    const limited = await limitHold();
    const items: { actionId: string; cause: string; causeInWords: string; state: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await as(w.principals.member).recovery.listOpen({ companyId: w.companyA.id, limit: 200, ...(cursor ? { cursor } : {}) });
      items.push(...page.items);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(items.find((i) => i.actionId === exhausted.actionId)).toMatchObject({ cause: EXPORT_RETRY_EXHAUSTED_CAUSE, causeInWords: "Copying the work back kept failing", state: "attention" });
    expect(items.find((i) => i.actionId === limited.actionId)).toMatchObject({ cause: EXPORT_LIMIT_CAUSE, causeInWords: "Copying the work back stopped at an archive limit", state: "attention" });
  });

  it("the run page lists each finalization attempt (number, failure code, time) for runtime managers only", async () => {
    const h = await exhaustedHold();
    const finalization = await as(w.principals.manager).runs.finalization({ companyId: w.companyA.id, runId: h.runId });
    expect(finalization.attempts.map((a) => [a.attempt, a.failureCode, a.exhausted])).toEqual([
      [1, "provider_export_failed", false],
      [2, "provider_export_failed", false],
      [3, "provider_export_failed", true],
    ]);
    for (const a of finalization.attempts) expect(a.startedAt).toBeInstanceOf(Date);
    expect(await rejection(as(w.principals.member).runs.finalization({ companyId: w.companyA.id, runId: h.runId }))).toMatchObject({ code: "FORBIDDEN" });
  });
});
