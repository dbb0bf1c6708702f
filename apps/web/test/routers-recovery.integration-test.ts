// The recovery router against a real database and real unverified-owner holds (recovery-fixture:
// a running native run mid-copyback with an accepted result and a dead controller's receipt,
// the action opened by core's writer): what each role reads on the task page
// (recovery.forIssue), the company's Recovery page (recovery.listOpen), the stop attestation
// through tRPC (recovery.attestOwnerStop), the board's recovery chip (issues.list) and the wake
// refusal while a hold is open.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDedicatedConnection, withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import type { Principal } from "@copyback/core/auth";
import { finalizationLockKey } from "@copyback/core/finalization";
import { readProcessIdentity } from "@copyback/core/process";
import {
  recordFilesGivenUp,
  recordHarnessCheck,
  resolveOwnerHoldsOnCommit,
  OWNER_UNVERIFIED_NEXT_ACTION,
} from "@copyback/core/records";
import {
  FILES_GIVEN_UP_MESSAGE,
  RESTORING_MESSAGE,
  MAINTENANCE_SQL_TEMPLATE,
  STOP_EVIDENCE_PLACEHOLDER,
} from "@copyback/core/recovery";
import { configureWebApp, disconnectWebApp, PUBLIC_URL } from "./auth-fixture";
import { carriesReceipt, createOwnerHold, holdState, type OwnerHold } from "./recovery-fixture";
import { createFileHold, fileHoldState, restoredBody } from "./file-hold-fixture";
import { buildWorld, callerFor, rejection, type World } from "./routers-fixture";

const database = useTestDatabase();
const db = () => database.prisma();
let w: World;
let environmentId: string;

beforeAll(async () => {
  // The API call's URL is the console's own origin (COPYBACK_PUBLIC_URL here).
  configureWebApp(database.url(), "authenticated");
  w = await buildWorld(db());
  environmentId = (
    await db().environment.create({ data: { companyId: w.companyA.id, name: "Fake sandbox", provider: "fake", pluginId: "builtin.fake" } })
  ).id;
});
afterAll(disconnectWebApp);

const hold = (dead: "foreign_host" | "exited_here" = "foreign_host") =>
  createOwnerHold(db(), { companyId: w.companyA.id, agentId: w.agentA.id, environmentId }, dead);

const as = (principal: Principal) => callerFor(db(), principal);
const forIssue = (principal: Principal, h: { issueId: string }) => as(principal).recovery.forIssue({ companyId: w.companyA.id, issueId: h.issueId });

const STOP_EVIDENCE = "Railway: deployment d-42 REMOVED at 10:02, controller and copyback children gone";
const attestInput = (h: OwnerHold, overrides: Record<string, unknown> = {}) => ({
  companyId: w.companyA.id,
  issueId: h.issueId,
  actionId: h.actionId,
  runId: h.runId,
  ownerToken: h.receipt.token,
  controllerAndCopybackStopped: true as const,
  stopEvidence: STOP_EVIDENCE,
  ...overrides,
});

/** R-UI-1: nothing of the recorded controller (host, process id, boot id) appears in `data`. */
function expectNoControllerIdentity(data: unknown, h: OwnerHold) {
  const text = JSON.stringify(data);
  expect(text).not.toContain(h.receipt.host);
  expect(text).not.toContain(h.receipt.bootId);
  expect(text).not.toMatch(new RegExp(`\\b${h.receipt.pid}\\b`));
  expect(text).not.toMatch(/"(pid|host|processStart|bootId|owner)"/);
}

describe("recovery.forIssue: what the task page shows each role", () => {
  it("R-UI-1, R-UI-2: a member sees the compact operator-attention notice with its run, and no Recovery details, token or controller identity", async () => {
    const h = await hold();
    const answer = await forIssue(w.principals.member, h);
    expect(answer).toEqual({
      notice: {
        kind: "attention",
        runId: h.runId,
        actionId: h.actionId,
        cause: "native_workspace_finalization_owner_unverified",
        message: expect.stringMatching(/administrator needs to confirm/),
      },
      details: null,
    });
    expectNoControllerIdentity(answer, h);
    expect(JSON.stringify(answer)).not.toContain(h.receipt.token);
  });

  it("R-UI-2: a runtime manager also gets Recovery details (cause, age, status, next action, run and lease ids, phase and reason in words) without the token, the API call or the SQL", async () => {
    const h = await hold();
    const answer = await forIssue(w.principals.manager, h);
    expect(answer.notice.kind).toBe("attention");
    expect(answer.details).toEqual([
      {
        actionId: h.actionId,
        cause: "native_workspace_finalization_owner_unverified",
        causeInWords: "Copyback owner could not be verified",
        status: "active",
        createdAt: expect.any(Date),
        // R-ATT-4: core's copyback-specific instructions, as the reconciler wrote them.
        nextAction: OWNER_UNVERIFIED_NEXT_ACTION,
        runId: h.runId,
        leaseIds: [h.leaseId],
        phase: "workspace_finalizing",
        phaseInWords: "Copying the work back to the workspace",
        reason: "controller_on_other_host",
        reasonInWords: expect.stringMatching(/another machine/),
        attestedAt: null,
        operator: null,
        fileSource: null,
        packHold: null,
        exportHold: null,
        // R-RC-3: no "Continue from saved sources" delivery waits on this hold.
        deferral: null,
        // R-RW-3: no harness is configured here, so no automatic stop proof was tried.
        stopProof: null,
      },
    ]);
    expectNoControllerIdentity(answer, h);
    expect(JSON.stringify(answer)).not.toContain(h.receipt.token);
  });

  it("R-UI-1: a controller that exited on this host is described in words too, never by its process id", async () => {
    const h = await hold("exited_here");
    const answer = await forIssue(w.principals.manager, h);
    expect(answer.details?.[0]).toMatchObject({ reason: "controller_exited_without_barrier", reasonInWords: expect.stringMatching(/exited before the copy was confirmed/) });
    expectNoControllerIdentity(answer, h);
  });

  it("R-RW-3: Recovery details show the harness's last refusal as its fixed code in words and when it was checked, never the harness's own text", async () => {
    const h = await hold();
    const harnessText = "Railway says SUCCESS for deployment dep-secret-7 on builder-host-3";
    expect(await recordHarnessCheck(db(), { actionId: h.actionId, code: "deployment_live", message: harnessText })).toBe(true);
    const answer = await forIssue(w.principals.manager, h);
    const stopProof = answer.details?.[0]?.stopProof;
    expect(stopProof).toEqual({ code: "deployment_live", codeInWords: "the deployment is still live", checkedAt: expect.any(Date) });
    expect(Math.abs((stopProof?.checkedAt.getTime() ?? 0) - Date.now())).toBeLessThan(60_000);
    expect(JSON.stringify(answer)).not.toContain("dep-secret-7");
    expect(JSON.stringify(answer)).not.toContain("builder-host-3");
    // An unknown receipt code still reads calmly, without the text.
    await recordHarnessCheck(db(), { actionId: h.actionId, code: "receipt_run", message: harnessText });
    expect((await forIssue(w.principals.manager, h)).details?.[0]?.stopProof).toMatchObject({ code: "receipt_run", codeInWords: "the stop receipt did not match this run" });
    // Once the stop is attested the refusal is history: nothing is shown.
    await as(w.principals.admin).recovery.attestOwnerStop(attestInput(h));
    const after = await forIssue(w.principals.manager, h);
    expect(after.details?.[0]?.stopProof ?? null).toBeNull();
  });

  it("R-ATT-2: an administrator gets the owner token, the exact API call and the maintenance SQL with its four placeholders filled, still without the controller's host or process id", async () => {
    const h = await hold();
    const answer = await forIssue(w.principals.admin, h);
    const operator = answer.details?.[0]?.operator;
    const path = `/api/issues/${h.issueId}/recovery-actions/resume-workspace-finalization`;
    expect(operator).toEqual({
      ownerToken: h.receipt.token,
      apiCall: {
        method: "POST",
        url: `${PUBLIC_URL}${path}`,
        body: { actionId: h.actionId, runId: h.runId, ownerToken: h.receipt.token, controllerAndCopybackStopped: true, stopEvidence: STOP_EVIDENCE_PLACEHOLDER },
        curl: expect.stringContaining(`curl -X POST "${PUBLIC_URL}${path}"`),
      },
      maintenanceSql: MAINTENANCE_SQL_TEMPLATE.replaceAll("<company-id>", w.companyA.id)
        .replaceAll("<run-id>", h.runId)
        .replaceAll("<issue-id>", h.issueId)
        .replaceAll("<owner-token>", h.receipt.token),
    });
    for (const value of [h.actionId, h.runId, h.receipt.token, "controllerAndCopybackStopped"]) expect(operator?.apiCall?.curl).toContain(value);
    expect(operator?.maintenanceSql).not.toMatch(/<(company-id|run-id|issue-id|owner-token)>/);
    expectNoControllerIdentity(answer, h);
  });

  it("R-ATT-2: owners, the local board and instance administrators get the operator guidance; runtime managers and members never do", async () => {
    const h = await hold();
    for (const principal of [w.principals.owner, w.principals.localBoard, w.principals.instanceAdmin]) {
      expect((await forIssue(principal, h)).details?.[0]?.operator?.ownerToken).toBe(h.receipt.token);
    }
    expect((await forIssue(w.principals.manager, h)).details?.[0]?.operator).toBeNull();
    expect((await forIssue(w.principals.member, h)).details).toBeNull();
  });

  it("R-UI-5: role data the database cannot hold grants no reading at all, let alone details", async () => {
    const h = await hold();
    for (const role of [null, "superuser"]) {
      const principal = { kind: "board_user", userId: w.users.memberUser.id, isInstanceAdmin: false, via: "session", memberships: [{ companyId: w.companyA.id, role, status: "active" }] } as unknown as Principal;
      expect(await rejection(forIssue(principal, h))).toMatchObject({ code: "FORBIDDEN" });
    }
  });

  it("answers no notice for a task without open recovery, and not found for another company's task", async () => {
    expect(await forIssue(w.principals.admin, { issueId: w.issuesA[1]!.id })).toEqual({ notice: { kind: "none" }, details: [] });
    expect(await rejection(forIssue(w.principals.owner, { issueId: w.issueB.id }))).toMatchObject({ code: "NOT_FOUND" });
  });

  it("R-UI-1: 'Restoring saved work…' for everyone from the attestation until commitment resolves the hold, then no notice", async () => {
    const h = await hold();
    await as(w.principals.admin).recovery.attestOwnerStop(attestInput(h));
    for (const principal of [w.principals.member, w.principals.manager, w.principals.admin]) {
      expect((await forIssue(principal, h)).notice).toEqual({ kind: "restoring", runId: h.runId, message: RESTORING_MESSAGE });
    }
    const details = (await forIssue(w.principals.admin, h)).details;
    // Attested: no call left to make (a repeat would only answer already_attested).
    expect(details).toEqual([expect.objectContaining({ actionId: h.actionId, attestedAt: expect.any(Date), operator: null })]);
    expectNoControllerIdentity(await forIssue(w.principals.manager, h), h);

    // What the reconciler does once the same run's copyback commits (R-ORP-3).
    await withTransaction(db(), (tx) => resolveOwnerHoldsOnCommit(tx, { companyId: w.companyA.id, runId: h.runId }));
    expect(await forIssue(w.principals.member, h)).toEqual({ notice: { kind: "none" }, details: null });
  });
});

describe("recovery.listOpen: the company's Recovery page", () => {
  it("lists every open action across the company's tasks, oldest first, with its task, age, state and next action, keyset-paged; nothing of another company, nothing resolved, no controller identity", async () => {
    const before = await as(w.principals.member).recovery.listOpen({ companyId: w.companyA.id });
    const first = await hold();
    const second = await hold();
    const third = await hold();
    const resolved = await hold();
    await withTransaction(db(), (tx) => resolveOwnerHoldsOnCommit(tx, { companyId: w.companyA.id, runId: resolved.runId }));
    await as(w.principals.owner).recovery.attestOwnerStop(attestInput(second));
    const environmentB = await db().environment.create({ data: { companyId: w.companyB.id, name: "B sandbox", provider: "fake", pluginId: "builtin.fake" } });
    const other = await createOwnerHold(db(), { companyId: w.companyB.id, agentId: w.agentB.id, environmentId: environmentB.id });

    const seen: string[] = [];
    let cursor: string | undefined;
    const items = [];
    do {
      const page = await as(w.principals.member).recovery.listOpen({ companyId: w.companyA.id, limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(2);
      items.push(...page.items);
      seen.push(...page.items.map((item) => item.actionId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const mine = seen.filter((id) => !before.items.some((item) => item.actionId === id));
    expect(mine).toEqual([first.actionId, second.actionId, third.actionId]);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).not.toContain(resolved.actionId);
    expect(seen).not.toContain(other.actionId);
    const createdAts = items.map((item) => item.createdAt.getTime());
    expect([...createdAts].sort((a, b) => a - b)).toEqual(createdAts);

    expect(items.find((item) => item.actionId === first.actionId)).toEqual({
      actionId: first.actionId,
      issue: { id: first.issueId, identifier: first.identifier, title: expect.stringMatching(/^Held task/), status: "in_progress" },
      cause: "native_workspace_finalization_owner_unverified",
      causeInWords: "Copyback owner could not be verified",
      state: "attention",
      createdAt: expect.any(Date),
      nextAction: OWNER_UNVERIFIED_NEXT_ACTION,
      runId: first.runId,
    });
    expect(items.find((item) => item.actionId === second.actionId)?.state).toBe("restoring");
    for (const h of [first, second, third]) {
      expectNoControllerIdentity(items, h);
      expect(JSON.stringify(items)).not.toContain(h.receipt.token);
    }
  });

  it("refuses a malformed cursor instead of answering the first page", async () => {
    expect(await rejection(as(w.principals.member).recovery.listOpen({ companyId: w.companyA.id, cursor: "bm9wZQ" }))).toMatchObject({ code: "BAD_REQUEST" });
  });
});

describe("recovery.attestOwnerStop through tRPC", () => {
  it("R-ATT-3: releases exactly the attested receipt and records the evidence; a repeat is already_attested and writes nothing more (one activity row)", async () => {
    const h = await hold();
    const before = await holdState(db(), h);
    const first = await as(w.principals.admin).recovery.attestOwnerStop(attestInput(h));
    expect(first).toEqual({ actionId: h.actionId, runId: h.runId, leaseIds: [h.leaseId], status: "attested" });
    expect(await carriesReceipt(db(), h.runId)).toBe(false);
    const after = await holdState(db(), h);
    // The action stays open until commitment; the result, coordinator and task are untouched.
    expect(after.action.status).toBe("active");
    expect(after.action.evidence).toMatchObject({ attestation: { ownerToken: h.receipt.token, stopEvidence: STOP_EVIDENCE, actor: { type: "user", id: w.users.adminUser.id } } });
    expect(after.coordinator).toEqual(before.coordinator);
    expect(after.issue).toEqual(before.issue);
    expect(after.run.status).toBe("running");
    expect(after.run.resultJson).toEqual(before.run.resultJson);
    expect(after.activity).toBe(before.activity + 1);

    const repeat = await as(w.principals.owner).recovery.attestOwnerStop(attestInput(h));
    expect(repeat).toEqual({ ...first, status: "already_attested" });
    expect(await holdState(db(), h)).toEqual(after);
  });

  it("R-ATT-2: runtime managers, members, suspended members and agents are refused (FORBIDDEN), another company's owner reads not found, and nothing is written", async () => {
    const h = await hold();
    const before = await holdState(db(), h);
    for (const principal of [w.principals.manager, w.principals.member, w.principals.suspended, w.principals.agent]) {
      expect(await rejection(as(principal).recovery.attestOwnerStop(attestInput(h)))).toMatchObject({ code: "FORBIDDEN" });
    }
    expect(await rejection(as(w.principals.otherOwner).recovery.attestOwnerStop(attestInput(h)))).toMatchObject({ code: "NOT_FOUND" });
    expect(await holdState(db(), h)).toEqual(before);
    expect(await carriesReceipt(db(), h.runId)).toBe(true);
  });

  it("R-ATT-3: refusals are CONFLICTs with a stable code, and nothing is written", async () => {
    const cases: Array<[string, (h: OwnerHold) => Promise<Record<string, unknown>>]> = [
      ["owner_changed", async (h) => attestInput(h, { ownerToken: `${h.receipt.token}-older` })],
      ["run_mismatch", async (h) => attestInput(h, { runId: w.runA.id })],
      [
        "newer_run",
        async (h) => {
          await db().heartbeatRun.create({ data: { companyId: w.companyA.id, agentId: w.agentA.id, nativeIssueId: h.issueId, runtimeMode: "native", status: "queued" } });
          return attestInput(h);
        },
      ],
      [
        "task_closed",
        async (h) => {
          await db().issue.update({ where: { id: h.issueId }, data: { status: "cancelled" } });
          return attestInput(h);
        },
      ],
      [
        "controller_alive",
        async (h) => {
          // The recorded controller is observably alive on this host (this very process).
          const self = await readProcessIdentity(process.pid);
          const receipt = { ...h.receipt, host: self!.host, pid: self!.pid, processStart: self!.startTime, bootId: self!.bootId };
          await db().$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object('nativeWorkspaceFinalizationOwner', ${JSON.stringify(receipt)}::jsonb) WHERE id = ${h.runId}::uuid`;
          return attestInput(h);
        },
      ],
    ];
    for (const [code, prepare] of cases) {
      const h = await hold();
      const input = await prepare(h);
      const before = await holdState(db(), h);
      const error = await rejection(as(w.principals.admin).recovery.attestOwnerStop(input as ReturnType<typeof attestInput>));
      expect(error, code).toMatchObject({ code: "CONFLICT", domainCode: code });
      expect(await holdState(db(), h), code).toEqual(before);
      expect(await carriesReceipt(db(), h.runId), code).toBe(true);
    }
  });

  it("R-ATT-3: an active copyback lock refuses the attestation (copyback_lock_active), and nothing is written", async () => {
    const h = await hold();
    const before = await holdState(db(), h);
    const holder = await openDedicatedConnection(database.url(), { applicationName: "test-copyback-holder" });
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [finalizationLockKey(w.companyA.id, h.runId)]);
      expect(await rejection(as(w.principals.admin).recovery.attestOwnerStop(attestInput(h)))).toMatchObject({ code: "CONFLICT", domainCode: "copyback_lock_active" });
    } finally {
      await holder.query("ROLLBACK");
      await holder.end();
    }
    expect(await holdState(db(), h)).toEqual(before);
    // Once the copyback lock is free the same attestation is admitted.
    expect((await as(w.principals.admin).recovery.attestOwnerStop(attestInput(h))).status).toBe("attested");
  });

  it("R-ATT-1: anything but an explicit controllerAndCopybackStopped: true, or a missing stop evidence, is not an attestation (BAD_REQUEST); an unknown action is not found", async () => {
    const h = await hold();
    for (const overrides of [{ controllerAndCopybackStopped: false }, { stopEvidence: "   " }, { ownerToken: "" }, { actionId: "not-a-uuid" }, { extra: "field" }]) {
      expect(await rejection(as(w.principals.admin).recovery.attestOwnerStop(attestInput(h, overrides) as ReturnType<typeof attestInput>))).toMatchObject({ code: "BAD_REQUEST" });
    }
    expect(await rejection(as(w.principals.admin).recovery.attestOwnerStop(attestInput(h, { actionId: crypto.randomUUID() })))).toMatchObject({ code: "NOT_FOUND" });
    expect(await carriesReceipt(db(), h.runId)).toBe(true);
  });
});

describe("the board and the agent panel while a hold is open", () => {
  it("the issues board's chip says 'Needs attention', then 'Restoring saved work…' after the attestation; tasks without recovery have none", async () => {
    const h = await hold();
    const chipOf = async () => {
      const list = await as(w.principals.member).issues.list({ companyId: w.companyA.id, limit: 200 });
      return list.items.find((item) => item.id === h.issueId)?.recovery;
    };
    expect(await chipOf()).toEqual({ kind: "attention", label: "Needs attention" });
    await as(w.principals.admin).recovery.attestOwnerStop(attestInput(h));
    expect(await chipOf()).toEqual({ kind: "restoring", label: RESTORING_MESSAGE });
    const list = await as(w.principals.member).issues.list({ companyId: w.companyA.id, limit: 200 });
    expect(list.items.find((item) => item.id === w.issuesA[1]!.id)?.recovery).toBeNull();
  });

  it("R-ORP-3: Wake agent is refused with recovery_hold_open while the hold is open, and no run is queued", async () => {
    const h = await hold();
    const runs = await db().heartbeatRun.count({ where: { nativeIssueId: h.issueId } });
    const error = await rejection(as(w.principals.member).issues.wake({ companyId: w.companyA.id, issueId: h.issueId }));
    expect(error).toMatchObject({ code: "CONFLICT", domainCode: "recovery_hold_open", message: expect.stringMatching(/waiting for recovery/) });
    expect(await db().heartbeatRun.count({ where: { nativeIssueId: h.issueId } })).toBe(runs);
  });
});

describe("file holds on the task page and recovery.resolve (R-UI-2, R-UI-4, R-UI-5, R-RR-5)", () => {
  const fileHold = (kind: "legacy" | "cancelled_native" = "legacy") => createFileHold(db(), { companyId: w.companyA.id, agentId: w.agentA.id, environmentId }, kind);

  it("R-UI-2 R-UI-5 a member gets the compact notice only: no Recovery details, no source to record, nothing to certify", async () => {
    const h = await fileHold();
    const answer = await forIssue(w.principals.member, h);
    expect(answer).toEqual({
      notice: { kind: "attention", runId: h.runId, actionId: h.actionId, cause: "legacy_workspace_copyback_repair_required", message: expect.stringMatching(/operator needs to recover/) },
      details: null,
    });
  });

  it("R-UI-4 board operators get the file hold's source (run and allocation) and the unchanged task status; the confirmation applies only to a cancelled native run", async () => {
    const legacy = await fileHold();
    const [legacyDetails] = (await forIssue(w.principals.manager, legacy)).details ?? [];
    expect(legacyDetails?.fileSource).toEqual({
      runId: legacy.runId, runStatus: "failed", runtimeMode: "legacy", leaseId: legacy.leaseId, providerLeaseId: expect.stringMatching(/^sbx-/), cancelledNative: false, sourceIssueStatus: "blocked", givenUp: null,
    });
    expect(legacyDetails?.leaseIds).toEqual([legacy.leaseId]);
    const cancelled = await fileHold("cancelled_native");
    const [cancelledDetails] = (await forIssue(w.principals.owner, cancelled)).details ?? [];
    expect(cancelledDetails?.fileSource).toMatchObject({ runStatus: "cancelled", runtimeMode: "native", cancelledNative: true, sourceIssueStatus: "in_progress" });
  });

  it("a file hold whose sandbox was discarded: the notice says the work is gone and the source carries who gave it up, when and why", async () => {
    const h = await fileHold("cancelled_native");
    await withTransaction(db(), (tx) =>
      recordFilesGivenUp(tx, { actionIds: [h.actionId], leaseId: h.leaseId, providerLeaseId: null, by: { type: "user", id: null }, reason: "copied by hand", receipt: { schema: "test" } }),
    );
    const answer = await forIssue(w.principals.manager, h);
    expect(answer.notice).toMatchObject({ kind: "attention", message: FILES_GIVEN_UP_MESSAGE });
    expect(answer.details?.[0]?.fileSource?.givenUp).toMatchObject({ byType: "user", reason: "copied by hand", at: expect.any(Date) });
    expect(answer.details?.[0]?.nextAction).toContain("discarded by user");
  });

  it("R-RR-5 recovery.resolve records the repair for runtime:manage only; owner, status and generation are unchanged", async () => {
    const h = await fileHold("cancelled_native");
    const input = { companyId: w.companyA.id, issueId: h.issueId, ...restoredBody(h) } as Parameters<ReturnType<typeof as>["recovery"]["resolve"]>[0];
    expect(await rejection(as(w.principals.member).recovery.resolve(input))).toMatchObject({ code: "FORBIDDEN" });
    expect(await rejection(as(w.principals.agent).recovery.resolve(input))).toMatchObject({ code: expect.stringMatching(/FORBIDDEN|NOT_FOUND/) });
    const before = await fileHoldState(db(), h);
    const result = await as(w.principals.manager).recovery.resolve({ ...input, executionReconciliation: { ...input.executionReconciliation, noExternalActionsPerformed: true } });
    expect(result).toEqual({ actionId: h.actionId, runId: h.runId, leaseIds: [h.leaseId], outcome: "restored", status: "resolved" });
    expect(await fileHoldState(db(), h)).toEqual(before);
    expect((await db().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).resolutionEvidence).toMatchObject({ verified: { externalActions: "not_performed" } });
    expect((await forIssue(w.principals.manager, h)).notice).toEqual({ kind: "none" });
  });
});
