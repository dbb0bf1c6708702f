// Operator stop attestation on a real PostgreSQL (R-ATT-1..5, R-OWN-5, R-ORP-3): the admission
// matrix (each refusal writes nothing), idempotency with one activity row, the reconciler's
// commit of the exact sandbox bytes afterwards, the hold's lifecycle, and the spec's maintenance
// SQL run verbatim followed by the ordinary sweep.
import { readFile } from "node:fs/promises";
import pg from "pg";
import { createPrismaClient } from "@copyback/db/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { openOwnerUnverifiedAction, readOwnerUnverifiedEvidence } from "../../src/records/actions";
import { OWNER_UNVERIFIED_CAUSE, OWNER_UNVERIFIED_NEXT_ACTION } from "../../src/records/causes";
import { attestOwnerStop } from "../../src/recovery/operator/attest-owner-stop";
import { maintenanceSql } from "../../src/recovery/operator/guidance";
import { Reconciler } from "../../src/recovery/reconciler";
import { finalizationSweep } from "../../src/recovery/sweeps/finalization-sweep";
import { ownerHoldsSweep } from "../../src/recovery/sweeps/owner-holds-sweep";
import { listOpenActionsForIssue, noticeActionsOf } from "../../src/recovery/holds";
import { deriveTaskNotice, RESTORING_MESSAGE } from "../../src/recovery/task-notice";
import { wakeAgent } from "../../src/runs/wake-agent";
import { buildWorld, preparedRun, readTree, writeTree, type World } from "../finalization/finalization-fixture";
import { deadIdentity, leaveReceipt, liveDeps, markFinalizing, receiptOf, selfIdentity } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
const OPERATOR = { type: "user" as const, id: null };

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
});
afterAll(async () => {
  await world?.cleanup();
});

/** A run killed mid-export by a dead controller: coordinator workspace_finalizing, its receipt left, the hold opened. */
async function heldRun(outcome: "done" | "in_review" = "done", files: Record<string, string> = { "work/result.txt": "the agent's work" }) {
  const run = await preparedRun(world, outcome);
  await writeTree(run.sandbox, files);
  await markFinalizing(db.prisma(), run.runId);
  const receipt = receiptOf(await deadIdentity());
  await leaveReceipt(db.prisma(), run.runId, receipt);
  const held = await finalizeRun(await liveDeps(world), { runId: run.runId });
  if (held.kind !== "owner_unverified") throw new Error(`expected a hold, got ${held.kind}`);
  return { ...run, receipt, actionId: held.actionId };
}

function attestInput(h: Awaited<ReturnType<typeof heldRun>>, extra: Partial<{ ownerToken: string; runId: string; actionId: string }> = {}) {
  return {
    companyId: world.companyId,
    issueId: h.issueId,
    actor: OPERATOR,
    actionId: h.actionId,
    runId: h.runId,
    ownerToken: h.receipt.token,
    controllerAndCopybackStopped: true as const,
    stopEvidence: "Platform console: deployment d-1 REMOVED at 10:02, no processes left.",
    ...extra,
  };
}

/** Every row an attestation could touch, for "nothing was written". */
async function everything(runId: string, issueId: string) {
  const prisma = db.prisma();
  return {
    run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } }),
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } }),
    issue: await prisma.issue.findUniqueOrThrow({ where: { id: issueId } }),
    actions: await prisma.issueRecoveryAction.findMany({ where: { issueId }, orderBy: { createdAt: "asc" } }),
    leases: await prisma.environmentLease.findMany({ where: { runId }, orderBy: { createdAt: "asc" } }),
    results: await prisma.nativeRunResult.findMany({ where: { runId } }),
    operations: await prisma.workspaceOperation.findMany({ where: { runId }, orderBy: { createdAt: "asc" } }),
    activity: await prisma.activityLog.count({ where: { companyId: world.companyId } }),
  };
}

function reconciler() {
  return new Reconciler({ sweeps: [finalizationSweep({ ...world.deps() }), ownerHoldsSweep({ db: db.prisma() })] });
}

async function expectRefused(h: Awaited<ReturnType<typeof heldRun>>, input: ReturnType<typeof attestInput>, code: string) {
  const before = await everything(h.runId, h.issueId);
  await expect(attestOwnerStop(db.prisma(), input)).rejects.toMatchObject({ kind: "conflict", code });
  expect(await everything(h.runId, h.issueId)).toEqual(before);
}

describe("operator stop attestation", () => {
  it("R-ATT-3, R-ATT-1: an admitted attestation releases exactly the receipt and records owner and evidence with one activity row; result, descriptor, lease and task stay; the sweep then commits the sandbox's exact bytes and resolves the hold", async () => {
    const h = await heldRun("done", { "work/result.txt": "exact bytes \u00e9\n", "work/deep/nested.bin": "\u0000\u0001binary" });
    const before = await everything(h.runId, h.issueId);
    const answer = await attestOwnerStop(db.prisma(), attestInput(h));
    expect(answer).toEqual({ actionId: h.actionId, runId: h.runId, leaseIds: [h.handle.leaseId], status: "attested" });

    const after = await everything(h.runId, h.issueId);
    expect(readFinalizationOwner(after.run.runnerProfileJson)).toEqual({ kind: "none" });
    expect(after.coordinator).toEqual(before.coordinator);
    expect(after.issue).toEqual(before.issue);
    expect(after.leases).toEqual(before.leases);
    expect(after.results).toEqual(before.results);
    expect(after.activity).toBe(before.activity + 1);
    const action = after.actions.find((a) => a.id === h.actionId)!;
    expect(action.status).toBe("active");
    expect(readOwnerUnverifiedEvidence(action.evidence)?.attestation).toMatchObject({ ownerToken: h.receipt.token, stopEvidence: expect.stringContaining("REMOVED"), owner: { pid: h.receipt.pid } });

    // R-ATT-3: repeating it is idempotent: same answer, nothing written, still one activity row.
    const repeat = await attestOwnerStop(db.prisma(), attestInput(h));
    expect(repeat).toEqual({ ...answer, status: "already_attested" });
    expect(await everything(h.runId, h.issueId)).toEqual(after);

    const exportsBefore = world.provider.exports;
    const pass = await reconciler().pass();
    expect(pass.outcomes.finalization).toMatchObject({ committed: 1 });
    expect(world.provider.exports).toBe(exportsBefore + 1);
    const tree = await readTree(world.hostPath);
    expect(tree["work/result.txt"]).toBe("exact bytes \u00e9\n");
    expect(tree["work/deep/nested.bin"]).toBe("\u0000\u0001binary");
    const done = await everything(h.runId, h.issueId);
    expect(done.coordinator.phase).toBe("committed");
    expect(done.run.status).toBe("succeeded");
    expect(done.issue.status).toBe("done");
    // The accepted result is reused, no new one, no provider turn.
    expect(done.results).toEqual(before.results);
    expect(done.actions.find((a) => a.id === h.actionId)).toMatchObject({ status: "resolved", outcome: "copyback_committed", resolvedByType: "system" });
    expect(done.operations.filter((o) => o.status === "running")).toEqual([]);
  });

  it("R-ATT-3: works from retryable_failure with the retry schedule unchanged", async () => {
    const h = await heldRun();
    const next = new Date(Date.now() + 3_600_000);
    await db.prisma().nativeRunFinalization.update({ where: { runId: h.runId }, data: { phase: "retryable_failure", nextAttemptAt: next } });
    await attestOwnerStop(db.prisma(), attestInput(h));
    expect((await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } })).nextAttemptAt).toEqual(next);
    // The retry is not due yet: the sweep does not copy early (R-OWN-3).
    const exportsBefore = world.provider.exports;
    await reconciler().pass();
    expect(world.provider.exports).toBe(exportsBefore);
  });

  it("R-ATT-3: works from result_accepted", async () => {
    const run = await preparedRun(world, "done");
    const receipt = receiptOf(await deadIdentity());
    await leaveReceipt(db.prisma(), run.runId, receipt);
    const held = await finalizeRun(await liveDeps(world), { runId: run.runId });
    expect(held).toMatchObject({ kind: "owner_unverified" });
    const input = { companyId: world.companyId, issueId: run.issueId, actor: OPERATOR, actionId: (held as { actionId: string }).actionId, runId: run.runId, ownerToken: receipt.token, controllerAndCopybackStopped: true as const, stopEvidence: "stopped" };
    expect((await attestOwnerStop(db.prisma(), input)).status).toBe("attested");
  });

  describe("R-ATT-3: admission refuses, and writes nothing", () => {
    it("R-ATT-3: another owner token than the hold's (owner_changed)", async () => {
      const h = await heldRun();
      await expectRefused(h, attestInput(h, { ownerToken: "not-the-token-0000000000" }), "owner_changed");
    });
    it("R-ATT-3: a newer owner receipt on the run can never be released (owner_changed)", async () => {
      const h = await heldRun();
      await leaveReceipt(db.prisma(), h.runId, receiptOf(await deadIdentity(), "newer-owner-token-000000"));
      await expectRefused(h, attestInput(h), "owner_changed");
    });
    it("R-ATT-3: an active copyback lock (copyback_lock_active)", async () => {
      const h = await heldRun();
      const holder = new pg.Client({ connectionString: db.url() });
      await holder.connect();
      try {
        await holder.query("BEGIN");
        await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [finalizationLockKey(world.companyId, h.runId)]);
        await expectRefused(h, attestInput(h), "copyback_lock_active");
      } finally {
        await holder.query("ROLLBACK").catch(() => undefined);
        await holder.end();
      }
    });
    it("R-ATT-3: an observably live local controller (controller_alive)", async () => {
      const run = await preparedRun(world);
      await markFinalizing(db.prisma(), run.runId);
      const receipt = receiptOf(await selfIdentity());
      await leaveReceipt(db.prisma(), run.runId, receipt);
      const { actionId } = await openOwnerUnverifiedAction(db.prisma(), {
        companyId: world.companyId, issueId: run.issueId, runId: run.runId, receipt, reason: "controller_on_other_host", phase: "workspace_finalizing", resultId: null, leaseIds: [],
      });
      await expectRefused({ ...run, receipt, actionId }, attestInput({ ...run, receipt, actionId }), "controller_alive");
    });
    it("R-ATT-3: a newer run of the task (newer_run)", async () => {
      const h = await heldRun();
      const other = await db.prisma().heartbeatRun.create({ data: { companyId: world.companyId, agentId: world.agentId, nativeIssueId: h.issueId, status: "queued" } });
      try {
        await expectRefused(h, attestInput(h), "newer_run");
      } finally {
        await db.prisma().heartbeatRun.update({ where: { id: other.id }, data: { status: "cancelled" } });
      }
    });
    it("R-ATT-3: a newer execution bound to the task (newer_execution)", async () => {
      const h = await heldRun();
      const other = await db.prisma().heartbeatRun.create({ data: { companyId: world.companyId, agentId: world.agentId, nativeIssueId: h.issueId, status: "cancelled" } });
      await db.prisma().issue.update({ where: { id: h.issueId }, data: { executionRunId: other.id } });
      await expectRefused(h, attestInput(h), "newer_execution");
    });
    it("R-ATT-3: an unbound result (result_unbound)", async () => {
      const h = await heldRun();
      await db.prisma().nativeRunFinalization.update({ where: { runId: h.runId }, data: { resultId: null } });
      await expectRefused(h, attestInput(h), "result_unbound");
    });
    it("R-ATT-3: a coordinator that is arbitrating is not resumable here (phase_not_resumable)", async () => {
      const h = await heldRun();
      await db.prisma().nativeRunFinalization.update({ where: { runId: h.runId }, data: { phase: "arbitrating" } });
      await expectRefused(h, attestInput(h), "phase_not_resumable");
    });
    it("R-ATT-3: the action of another run (run_mismatch), a resolved action (action_not_open), another cause", async () => {
      const h = await heldRun();
      const other = await heldRun();
      await expectRefused(h, attestInput(h, { runId: other.runId }), "run_mismatch");
      await db.prisma().issueRecoveryAction.update({ where: { id: h.actionId }, data: { status: "resolved", resolvedAt: new Date(), resolvedByType: "system" } });
      await expectRefused(h, attestInput(h), "action_not_open");
      const foreign = await db.prisma().issueRecoveryAction.create({
        data: { companyId: world.companyId, issueId: other.issueId, runId: other.runId, cause: "native_workspace_sync_out_retry_exhausted", fingerprint: "x", ownerType: "board" },
      });
      await expectRefused(other, attestInput(other, { actionId: foreign.id }), "action_not_owner_unverified");
    });
    it("an action of another task or company is not found", async () => {
      const h = await heldRun();
      const other = await heldRun();
      await expect(attestOwnerStop(db.prisma(), { ...attestInput(h), issueId: other.issueId })).rejects.toMatchObject({ kind: "not_found" });
    });
  });

  it("R-OWN-5: task completion does not remove the hold while the run carries its receipt; replacing the receipt makes it stale: resolved by the system, issue activity untouched", async () => {
    const h = await heldRun();
    await db.prisma().issue.update({ where: { id: h.issueId }, data: { status: "done" } });
    await reconciler().pass();
    expect((await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).status).toBe("active");

    const issueBefore = await db.prisma().issue.findUniqueOrThrow({ where: { id: h.issueId } });
    const activityBefore = await db.prisma().activityLog.count({ where: { companyId: world.companyId } });
    await leaveReceipt(db.prisma(), h.runId, receiptOf(await selfIdentity(), "replacement-owner-token-0"));
    await reconciler().pass();
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).toMatchObject({ status: "resolved", outcome: "stale_owner_receipt", resolvedByType: "system", resolvedByUserId: null });
    expect(await db.prisma().issue.findUniqueOrThrow({ where: { id: h.issueId } })).toEqual(issueBefore);
    expect(await db.prisma().activityLog.count({ where: { companyId: world.companyId } })).toBe(activityBefore);
  });

  it("R-ATT-4: an older hold whose budget was spent gets the copyback instructions back, once; attempts are not spent", async () => {
    const h = await heldRun();
    await db.prisma().issueRecoveryAction.update({ where: { id: h.actionId }, data: { nextAction: "Start a new agent run to redo the work.", attemptCount: 3, maxAttempts: 3 } });
    await reconciler().pass();
    const action = await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } });
    expect(action).toMatchObject({ nextAction: OWNER_UNVERIFIED_NEXT_ACTION, attemptCount: 3, status: "active" });
    await reconciler().pass();
    expect((await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).updatedAt).toEqual(action.updatedAt);
  });

  it("R-ORP-3: a new queued run cannot clear the hold: waking the agent is refused with the reason, and the sweep keeps the hold and the lease", async () => {
    const h = await heldRun();
    await expect(wakeAgent(db.prisma(), { companyId: world.companyId, issueId: h.issueId, actor: OPERATOR })).rejects.toMatchObject({ code: "recovery_hold_open" });
    await reconciler().pass();
    expect((await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).status).toBe("active");
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: h.handle.leaseId } })).status).toBe("active");
  });
});

describe("R-ATT-5: the spec's maintenance SQL", () => {
  it("R-ATT-5: run verbatim on a held run, then the ordinary sweep: committed in both places, no nextAttemptAt, no running operation, the accepted result reused, the hold resolved by the system", async () => {
    const h = await heldRun("in_review", { "sql/path.txt": "via maintenance" });
    const template = await readFile(new URL("../../../db/test/fixtures/release-finalization-owner.sql", import.meta.url), "utf8");
    const sql = template
      .replaceAll("<company-id>", world.companyId)
      .replaceAll("<run-id>", h.runId)
      .replaceAll("<issue-id>", h.issueId)
      .replaceAll("<owner-token>", h.receipt.token);
    const client = new pg.Client({ connectionString: db.url() });
    await client.connect();
    try {
      const results = (await client.query(sql)) as unknown as pg.QueryResult[];
      expect(results[2]?.rowCount).toBe(1);
    } finally {
      await client.end();
    }
    const resultsBefore = await db.prisma().nativeRunResult.findMany({ where: { runId: h.runId } });
    await reconciler().pass();
    const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } });
    const coordinator = await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } });
    expect(run.nativePhase).toBe("committed");
    expect(run.resultJson).toMatchObject({ finalizationPhase: "committed" });
    expect(coordinator).toMatchObject({ phase: "committed", nextAttemptAt: null, resultId: resultsBefore[0]?.id });
    expect(await db.prisma().workspaceOperation.count({ where: { runId: h.runId, status: "running" } })).toBe(0);
    expect(await db.prisma().nativeRunResult.findMany({ where: { runId: h.runId } })).toEqual(resultsBefore);
    expect((await readTree(world.hostPath))["sql/path.txt"]).toBe("via maintenance");
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).toMatchObject({ status: "resolved", resolvedByType: "system", cause: OWNER_UNVERIFIED_CAUSE });
  });
});

describe("one open hold per run", () => {
  it("R-OWN-5: after an attestation, a second owner that dies without a barrier opens a new hold that supersedes the attested one", async () => {
    const h = await heldRun();
    await attestOwnerStop(db.prisma(), attestInput(h));
    // The reconciler's new owner took the receipt and died mid-copy too.
    const second = receiptOf(await deadIdentity());
    await leaveReceipt(db.prisma(), h.runId, second);
    const held = await finalizeRun(await liveDeps(world), { runId: h.runId });
    expect(held).toMatchObject({ kind: "owner_unverified" });
    const open = await db.prisma().issueRecoveryAction.findMany({ where: { runId: h.runId, status: "active" } });
    expect(open.map((a) => a.id)).toEqual([(held as { actionId: string }).actionId]);
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).toMatchObject({ status: "resolved", outcome: "superseded_by_newer_owner", resolvedByType: "system" });
  });
});

describe("an attested hold with two reconcilers on one database", () => {
  it("R-ATT-3, R-UI-1: while the attested run's copyback is unfinished another reconciler's stale-owner cleanup keeps the hold (the task shows Restoring saved work…); it resolves as copyback_committed when the commit lands", async () => {
    const h = await heldRun("done", { "two/reconcilers.txt": "attested work\n" });
    await attestOwnerStop(db.prisma(), attestInput(h));
    const notice = async () => deriveTaskNotice(await noticeActionsOf(db.prisma(), world.companyId, await listOpenActionsForIssue(db.prisma(), world.companyId, h.issueId)));
    expect(await notice()).toMatchObject({ kind: "restoring", message: RESTORING_MESSAGE });

    // Reconciler A (this file's client) copies back; its export waits at a gate, so the
    // coordinator is unfinished while A's new owner receipt is on the run.
    let entered: () => void = () => undefined;
    const inExport = new Promise<void>((resolve) => (entered = resolve));
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    world.provider.faults.onExport = async () => {
      entered();
      await gate;
    };
    // Reconciler B: another instance on its own connections to the same database.
    const other = createPrismaClient({ databaseUrl: db.url(), poolSize: 2, applicationName: "reconciler-b" });
    const a = new Reconciler({ sweeps: [finalizationSweep(await liveDeps(world)), ownerHoldsSweep({ db: db.prisma() })] });
    const b = new Reconciler({ sweeps: [finalizationSweep({ ...(await liveDeps(world)), db: other }), ownerHoldsSweep({ db: other })] });
    let passA: ReturnType<Reconciler["pass"]> | null = null;
    try {
      passA = a.pass();
      await inExport;
      const run = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } });
      const owner = readFinalizationOwner(run.runnerProfileJson);
      expect(owner.kind).toBe("receipt");
      expect(owner.kind === "receipt" && owner.receipt.token).not.toBe(h.receipt.token);
      expect((await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } })).phase).toBe("workspace_finalizing");

      const passB = await b.pass();
      expect(passB.errors).toBe(0);
      expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).toMatchObject({ status: "active", outcome: null });
      expect(await notice()).toMatchObject({ kind: "restoring", message: RESTORING_MESSAGE });
    } finally {
      open();
      world.provider.faults.onExport = undefined;
      if (passA) await passA;
    }
    try {
      expect((await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } })).phase).toBe("committed");
      expect((await readTree(world.hostPath))["two/reconcilers.txt"]).toBe("attested work\n");
      expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).toMatchObject({ status: "resolved", outcome: "copyback_committed", resolvedByType: "system" });
      expect(await notice()).toEqual({ kind: "none" });
      // Later passes of either reconciler change nothing.
      const resolved = await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } });
      await b.pass();
      await a.pass();
      expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).toEqual(resolved);
    } finally {
      await other.$disconnect();
    }
  });
});

describe("a malformed owner receipt's way out", () => {
  /** The receipt as PostgreSQL stores it, hashed (what the hold names and the attestation must name). */
  async function storedReceiptSha256(runId: string): Promise<string> {
    const [row] = await db.prisma().$queryRaw<{ sha: string }[]>`
      SELECT encode(sha256(convert_to((runner_profile_json -> 'nativeWorkspaceFinalizationOwner')::text, 'UTF8')), 'hex') AS sha
      FROM heartbeat_runs WHERE id = ${runId}::uuid`;
    return row!.sha;
  }

  /** A run killed mid-export whose receipt cannot be read (a token no owner writes), held the production way. */
  async function malformedHold(malformed: unknown = { token: 42, pid: "not a pid" }) {
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "work/malformed.txt": "kept through a malformed receipt" });
    await markFinalizing(db.prisma(), run.runId);
    await leaveReceipt(db.prisma(), run.runId, malformed as Record<string, unknown>);
    const held = await finalizeRun(await liveDeps(world), { runId: run.runId });
    if (held.kind !== "owner_unverified") throw new Error(`expected a hold, got ${held.kind}`);
    const sha = await storedReceiptSha256(run.runId);
    return { ...run, actionId: held.actionId, sha, token: `malformed-receipt:sha256:${sha}` };
  }

  function malformedInput(h: Awaited<ReturnType<typeof malformedHold>>, extra: Partial<{ ownerToken: string; runId: string; actionId: string }> = {}) {
    return {
      companyId: world.companyId,
      issueId: h.issueId,
      actor: OPERATOR,
      actionId: h.actionId,
      runId: h.runId,
      ownerToken: h.token,
      controllerAndCopybackStopped: true as const,
      stopEvidence: "All workers of the instance were stopped and checked: no copyback process of this run.",
      ...extra,
    };
  }

  it("R-ATT-3, R-OWN-11: the hold of a malformed receipt names it (its sha256 and the attestation token), survives reconciler passes, and an attestation by action id with that token releases exactly it; the sweep then commits the saved result and resolves the hold", async () => {
    const h = await malformedHold();
    const opened = await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } });
    expect(readOwnerUnverifiedEvidence(opened.evidence)).toMatchObject({ ownerToken: null, receiptSha256: h.sha, reason: "receipt_malformed" });
    // R-OWN-5: while the run carries that receipt the hold is kept: not resolved as stale, not reopened.
    await reconciler().pass();
    await reconciler().pass();
    const open = await db.prisma().issueRecoveryAction.findMany({ where: { runId: h.runId, cause: OWNER_UNVERIFIED_CAUSE } });
    expect(open.map((a) => [a.id, a.status])).toEqual([[h.actionId, "active"]]);

    const before = await everything(h.runId, h.issueId);
    expect(await attestOwnerStop(db.prisma(), malformedInput(h))).toEqual({ actionId: h.actionId, runId: h.runId, leaseIds: [h.handle.leaseId], status: "attested" });
    const after = await everything(h.runId, h.issueId);
    expect(readFinalizationOwner(after.run.runnerProfileJson)).toEqual({ kind: "none" });
    expect(after.coordinator).toEqual(before.coordinator);
    expect(after.issue).toEqual(before.issue);
    expect(after.leases).toEqual(before.leases);
    expect(after.activity).toBe(before.activity + 1);
    expect(readOwnerUnverifiedEvidence(after.actions.find((a) => a.id === h.actionId)!.evidence)?.attestation).toMatchObject({ ownerToken: h.token, owner: null });
    // Idempotent, like any attestation.
    expect((await attestOwnerStop(db.prisma(), malformedInput(h))).status).toBe("already_attested");

    const pass = await reconciler().pass();
    expect(pass.outcomes.finalization).toMatchObject({ committed: 1 });
    expect((await readTree(world.hostPath))["work/malformed.txt"]).toBe("kept through a malformed receipt");
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).toMatchObject({ status: "resolved", outcome: "copyback_committed", resolvedByType: "system" });
  });

  it("R-ATT-3: a receipt with no token at all (a JSON null) gets the same way out", async () => {
    const h = await malformedHold(null);
    expect((await attestOwnerStop(db.prisma(), malformedInput(h))).status).toBe("attested");
    expect(readFinalizationOwner((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } })).runnerProfileJson)).toEqual({ kind: "none" });
  });

  describe("R-ATT-3: bad input for a malformed receipt's hold is refused and writes nothing", () => {
    it("R-ATT-3: a token of another shape or another receipt (owner_changed)", async () => {
      const h = await malformedHold();
      await expectRefused(h as never, malformedInput(h, { ownerToken: `malformed-receipt:sha256:${"0".repeat(64)}` }), "owner_changed");
      await expectRefused(h as never, malformedInput(h, { ownerToken: h.sha }), "owner_changed");
      await expectRefused(h as never, malformedInput(h, { ownerToken: "malformed-receipt" }), "owner_changed");
    });
    it("R-ATT-3: the receipt was rewritten since the hold opened (another malformed receipt, or a well-formed owner): owner_changed", async () => {
      const h = await malformedHold();
      await leaveReceipt(db.prisma(), h.runId, { token: 43 });
      await expectRefused(h as never, malformedInput(h), "owner_changed");
      await leaveReceipt(db.prisma(), h.runId, receiptOf(await deadIdentity()));
      await expectRefused(h as never, malformedInput(h), "owner_changed");
    });
    it("R-ATT-3: another run (run_mismatch); the action id of another task's hold or an unknown one (not found)", async () => {
      const h = await malformedHold();
      const other = await malformedHold();
      await expectRefused(h as never, malformedInput(h, { runId: other.runId }), "run_mismatch");
      const before = await everything(h.runId, h.issueId);
      await expect(attestOwnerStop(db.prisma(), malformedInput(h, { actionId: other.actionId }))).rejects.toMatchObject({ kind: "not_found" });
      await expect(attestOwnerStop(db.prisma(), malformedInput(h, { actionId: "00000000-0000-4000-8000-000000000000" }))).rejects.toMatchObject({ kind: "not_found" });
      expect(await everything(h.runId, h.issueId)).toEqual(before);
    });
    it("R-ATT-3: an active copyback lock still refuses (copyback_lock_active)", async () => {
      const h = await malformedHold();
      const holder = new pg.Client({ connectionString: db.url() });
      await holder.connect();
      try {
        await holder.query("BEGIN");
        await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [finalizationLockKey(world.companyId, h.runId)]);
        await expectRefused(h as never, malformedInput(h), "copyback_lock_active");
      } finally {
        await holder.query("ROLLBACK").catch(() => undefined);
        await holder.end();
      }
    });
  });

  it("R-ATT-5: the maintenance SQL's malformed-receipt form (the receipt's sha256 in place of its token), as the guidance fills it, releases exactly that receipt; the ordinary sweep then commits", async () => {
    const h = await malformedHold();
    const sql = maintenanceSql({ companyId: world.companyId, runId: h.runId, issueId: h.issueId, receiptSha256: h.sha });
    expect(sql).toContain(h.sha);
    const client = new pg.Client({ connectionString: db.url() });
    await client.connect();
    try {
      // Another receipt's hash releases nothing (zero rows: ownership changed, inspect again).
      const wrong = (await client.query(sql.replaceAll(h.sha, "0".repeat(64)))) as unknown as pg.QueryResult[];
      expect(wrong[2]?.rowCount).toBe(0);
      const results = (await client.query(sql)) as unknown as pg.QueryResult[];
      expect(results[2]?.rowCount).toBe(1);
    } finally {
      await client.end();
    }
    await reconciler().pass();
    expect(await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: h.runId } })).toMatchObject({ phase: "committed" });
    expect(await db.prisma().issueRecoveryAction.findUniqueOrThrow({ where: { id: h.actionId } })).toMatchObject({ status: "resolved", outcome: "copyback_committed" });
  });
});
