// Historical unsafe exports on a real PostgreSQL (R-UA-5): the state an older controller left
// (the run failed and its coordinator terminal with native_workspace_sync_out_unsafe_archive, the
// task blocked by that failure, sometimes an old repair card) is seeded directly in the database;
// the sweep replays the accepted result with the export omitted, without contacting the provider
// (the registry throws and the sandbox is deleted), and each clause that prevents the replay is
// shown to leave everything as it was.
import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { HISTORICAL_UNSAFE_ARCHIVE_CODE } from "../../src/records/coordinator-phases";
import { takeFinalizationOwnership } from "../../src/finalization/finalization-owner";
import type { FinalizeRunDeps } from "../../src/finalization/finalize-run";
import { LEASE_METADATA_KEYS, readStopIntent } from "../../src/leases/lease-metadata";
import { newStopIntent } from "../../src/leases/stop-intent";
import { Reconciler } from "../../src/recovery/reconciler";
import {
  dueHistoricalUnsafeSql,
  HISTORICAL_UNSAFE_DECLINED_EVENT,
  HISTORICAL_UNSAFE_REPLAYED_EVENT,
  historicalUnsafeSweep,
  type HistoricalUnsafeUnit,
} from "../../src/recovery/sweeps/historical-unsafe-sweep";
import { failRun } from "../../src/runs/settle-run";
import { buildWorld, preparedRun, readTree, writeTree, type World } from "../finalization/finalization-fixture";
import { liveDeps } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
let deps: FinalizeRunDeps;
/** Every provider lookup is recorded: the replay must make none. */
const providerLookups: string[] = [];

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
  deps = {
    ...(await liveDeps(world)),
    registry: {
      forLease(lease) {
        providerLookups.push(lease.pluginId);
        throw new Error("the historical unsafe replay must not contact the provider");
      },
    },
  };
});
afterAll(async () => {
  await world?.cleanup();
});

/** What an older controller left: accepted result, unsafe export rejected, run failed terminal, task blocked. */
async function historicalRun(opts: { outcome?: "done" | "in_review"; card?: "active" | "resolved_by_system" | "none" } = {}) {
  const prisma = db.prisma();
  await writeTree(world.hostPath, { "keep.txt": "host" });
  const run = await preparedRun(world, opts.outcome ?? "done");
  await writeTree(run.sandbox, { "work.txt": "the agent's work", "bad-link": "->/etc/passwd" });
  await prisma.workspaceOperation.create({
    data: { companyId: world.companyId, runId: run.runId, issueId: run.issueId, phase: "workspace_finalize", status: "failed", errorCode: HISTORICAL_UNSAFE_ARCHIVE_CODE, metadata: { attempt: 1 }, finishedAt: new Date() },
  });
  await prisma.nativeRunFinalization.update({ where: { runId: run.runId }, data: { attempt: 1 } });
  const failed = await failRun(prisma, { runId: run.runId, code: HISTORICAL_UNSAFE_ARCHIVE_CODE, message: "The workspace export was unsafe." });
  if (failed.kind !== "failed") throw new Error("fixture: the run did not fail");
  let cardId: string | null = null;
  if ((opts.card ?? "none") !== "none") {
    const resolved = opts.card === "resolved_by_system";
    const card = await prisma.issueRecoveryAction.create({
      data: {
        companyId: world.companyId,
        issueId: run.issueId,
        runId: run.runId,
        leaseId: run.handle.leaseId,
        cause: HISTORICAL_UNSAFE_ARCHIVE_CODE,
        fingerprint: `${run.runId}:unsafe`,
        ownerType: "board",
        status: resolved ? "resolved" : "active",
        nextAction: "Repair the sandbox's unsafe links and retry the export.",
        ...(resolved ? { resolvedAt: new Date(), resolvedByType: "system", outcome: "stale" } : {}),
      },
    });
    cardId = card.id;
  }
  // The sandbox is gone: nothing may depend on it.
  await rm(run.sandbox, { recursive: true, force: true });
  const unit: HistoricalUnsafeUnit = { runId: run.runId, companyId: world.companyId, issueId: run.issueId };
  return { ...run, unit, cardId };
}

async function snapshotOf(runId: string, issueId: string) {
  const prisma = db.prisma();
  return {
    run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true, errorCode: true, nativePhase: true } }),
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId }, select: { phase: true, failureCode: true, attempt: true } }),
    issue: await prisma.issue.findUniqueOrThrow({ where: { id: issueId }, select: { status: true, statusVersion: true, assigneeAgentId: true } }),
    operations: await prisma.workspaceOperation.count({ where: { runId } }),
    actions: await prisma.issueRecoveryAction.findMany({ where: { issueId }, select: { id: true, status: true, outcome: true }, orderBy: { createdAt: "asc" } }),
    runs: await prisma.heartbeatRun.count({ where: { nativeIssueId: issueId } }),
  };
}

const sweep = () => historicalUnsafeSweep(deps);
const dueIds = async () => (await sweep().due(500)).map((u) => u.runId);

describe("historical unsafe exports (R-UA-5)", () => {
  it("R-UA-5 the sweep replays the accepted result with the export omitted, without contacting the provider; the task gets the saved outcome, no turn, no card", async () => {
    const prisma = db.prisma();
    const h = await historicalRun({ outcome: "done" });
    const hostBefore = await readTree(world.hostPath);
    const activityBefore = await prisma.activityLog.count({ where: { companyId: world.companyId } });
    expect(await dueIds()).toContain(h.runId);
    const lookups = providerLookups.length;

    // Through the reconciler, as the worker runs it.
    const pass = await new Reconciler({ sweeps: [sweep()] }).pass();
    expect(pass.errors).toBe(0);
    expect(pass.outcomes.historical_unsafe?.replayed_committed).toBeGreaterThanOrEqual(1);

    expect(providerLookups.length).toBe(lookups);
    const s = await snapshotOf(h.runId, h.issueId);
    expect(s.run).toMatchObject({ status: "succeeded", errorCode: null, nativePhase: "committed" });
    expect(s.coordinator).toMatchObject({ phase: "committed", failureCode: null });
    expect(s.issue.status).toBe("done");
    expect(s.runs).toBe(1);
    expect(s.actions).toEqual([]);
    // The export was omitted: the host is untouched, the barrier says so.
    expect(await readTree(world.hostPath)).toEqual(hostBefore);
    const barrier = await prisma.workspaceOperation.findFirstOrThrow({ where: { runId: h.runId, phase: "workspace_finalize", status: "succeeded" } });
    expect(barrier.metadata).toMatchObject({ omitted: true, historicalUnsafe: true, written: 0 });
    // Diagnostics only in the run log, at info level, without host paths or link targets.
    const events = await prisma.runEvent.findMany({ where: { runId: h.runId }, orderBy: { createdAt: "asc" } });
    const omitted = events.find((e) => e.code === "workspace_export_omitted");
    expect(omitted).toMatchObject({ level: "info" });
    expect(events.find((e) => e.code === HISTORICAL_UNSAFE_REPLAYED_EVENT)).toMatchObject({ level: "info" });
    for (const e of events.filter((e) => e.createdAt >= (omitted?.createdAt ?? new Date()))) {
      expect(JSON.stringify([e.message, e.payload])).not.toMatch(/\/etc|passwd|bad-link|\/tmp\//);
    }
    // The only activity rows are the ordinary commit's (status change, run succeeded).
    const activity = await prisma.activityLog.findMany({ where: { companyId: world.companyId }, orderBy: { createdAt: "asc" }, skip: activityBefore });
    expect(activity.map((a) => a.action).sort()).toEqual(["issue.status_changed", "run.succeeded"]);
    expect(await dueIds()).not.toContain(h.runId);
  });

  it("R-UA-5 an active old repair card is cleared (resolved by the system), never restored; an incorrectly resolved one stays as it was and the replay still happens", async () => {
    const prisma = db.prisma();
    const active = await historicalRun({ card: "active", outcome: "in_review" });
    expect(await dueIds()).toContain(active.runId);
    expect(await sweep().handle(active.unit)).toBe("replayed_committed");
    const card = await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: active.cardId as string } });
    expect(card).toMatchObject({ status: "resolved", resolvedByType: "system", outcome: "historical_unsafe_export_omitted", resolvedByUserId: null });
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: active.issueId } })).status).toBe("in_review");
    expect(await prisma.issueRecoveryAction.count({ where: { issueId: active.issueId, status: { in: ["active", "escalated"] } } })).toBe(0);

    const wrong = await historicalRun({ card: "resolved_by_system" });
    expect(await sweep().handle(wrong.unit)).toBe("replayed_committed");
    expect(await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: wrong.cardId as string } })).toMatchObject({ status: "resolved", outcome: "stale" });
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: wrong.issueId } })).status).toBe("done");
  });

  it("R-UA-5 an existing stop-only intent keeps its exact ownership and cleanup protections through the replay", async () => {
    const prisma = db.prisma();
    const h = await historicalRun();
    const lease = await prisma.environmentLease.findUniqueOrThrow({ where: { id: h.handle.leaseId } });
    const intent = newStopIntent(lease, h.handle.providerLeaseId);
    await prisma.environmentLease.update({ where: { id: lease.id }, data: { status: "pending_cleanup", metadata: { [LEASE_METADATA_KEYS.stopIntent]: intent } } });
    expect(await sweep().handle(h.unit)).toBe("replayed_committed");
    const after = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.status).toBe("pending_cleanup");
    expect(readStopIntent(after.metadata, after)).toMatchObject({ kind: "present", value: { requestId: intent.requestId, leaseId: lease.id } });
  });

  it("R-UA-5 a newer run of the task prevents the replay: declined once in the run log, nothing else written, never selected again", async () => {
    const prisma = db.prisma();
    const h = await historicalRun();
    await prisma.heartbeatRun.create({ data: { companyId: world.companyId, agentId: world.agentId, nativeIssueId: h.issueId, status: "succeeded", runtimeMode: "native" } });
    const before = await snapshotOf(h.runId, h.issueId);
    expect(await sweep().handle(h.unit)).toBe("decline_newer_run");
    expect(await snapshotOf(h.runId, h.issueId)).toEqual(before);
    const declined = await prisma.runEvent.findMany({ where: { runId: h.runId, code: HISTORICAL_UNSAFE_DECLINED_EVENT } });
    expect(declined).toHaveLength(1);
    expect(declined[0]).toMatchObject({ level: "info", payload: { reason: "newer_run" } });
    expect(await dueIds()).not.toContain(h.runId);
    // A repeated handling writes no second event.
    await sweep().handle(h.unit);
    expect(await prisma.runEvent.count({ where: { runId: h.runId, code: HISTORICAL_UNSAFE_DECLINED_EVENT } })).toBe(1);
  });

  it("R-UA-5 changed task ownership prevents the replay (the task reassigned to another agent)", async () => {
    const prisma = db.prisma();
    const h = await historicalRun();
    const other = await prisma.agent.create({ data: { companyId: world.companyId, name: "Other", command: ["/bin/true"], environmentId: world.environmentId } });
    await prisma.issue.update({ where: { id: h.issueId }, data: { assigneeAgentId: other.id } });
    const before = await snapshotOf(h.runId, h.issueId);
    expect(await sweep().handle(h.unit)).toBe("decline_ownership_changed");
    expect(await snapshotOf(h.runId, h.issueId)).toEqual(before);
    expect(before.run.status).toBe("failed");
  });

  it("R-UA-5 a task a person moved since the failure prevents the replay (status and status version changed)", async () => {
    const prisma = db.prisma();
    const h = await historicalRun();
    await prisma.issue.update({ where: { id: h.issueId }, data: { status: "todo", statusVersion: { increment: 1 } } });
    const before = await snapshotOf(h.runId, h.issueId);
    expect(await sweep().handle(h.unit)).toBe("decline_task_changed");
    expect(await snapshotOf(h.runId, h.issueId)).toEqual(before);
  });

  it("R-UA-5 a changed contract prevents the replay (the task now runs in another execution workspace)", async () => {
    const prisma = db.prisma();
    const h = await historicalRun();
    const ws = await prisma.executionWorkspace.create({ data: { companyId: world.companyId, name: `other-${h.runId}`, hostPath: `${world.hostPath}-other` } });
    await prisma.issue.update({ where: { id: h.issueId }, data: { executionWorkspaceId: ws.id } });
    const before = await snapshotOf(h.runId, h.issueId);
    expect(await sweep().handle(h.unit)).toBe("decline_contract_changed");
    expect(await snapshotOf(h.runId, h.issueId)).toEqual(before);
  });

  it("R-UA-5 an explicit operator disposition (the old card resolved as a false positive by a person) prevents the replay", async () => {
    const prisma = db.prisma();
    const h = await historicalRun({ card: "active" });
    await prisma.issueRecoveryAction.update({ where: { id: h.cardId as string }, data: { status: "resolved", outcome: "false_positive", resolvedByType: "user", resolvedAt: new Date() } });
    const before = await snapshotOf(h.runId, h.issueId);
    expect(await sweep().handle(h.unit)).toBe("decline_operator_disposition");
    expect(await snapshotOf(h.runId, h.issueId)).toEqual(before);
  });

  it("R-UA-5 another active recovery action on the task defers the replay with nothing written; once it is settled the replay happens", async () => {
    const prisma = db.prisma();
    const h = await historicalRun();
    const other = await prisma.issueRecoveryAction.create({
      data: { companyId: world.companyId, issueId: h.issueId, runId: h.runId, cause: "native_workspace_file_recovery_required", fingerprint: `${h.runId}:files`, ownerType: "board", status: "active" },
    });
    expect(await dueIds()).not.toContain(h.runId);
    const before = await snapshotOf(h.runId, h.issueId);
    expect(await sweep().handle(h.unit)).toBe("defer_other_recovery_action");
    expect(await snapshotOf(h.runId, h.issueId)).toEqual(before);
    expect(await prisma.runEvent.count({ where: { runId: h.runId, code: HISTORICAL_UNSAFE_DECLINED_EVENT } })).toBe(0);

    await prisma.issueRecoveryAction.update({ where: { id: other.id }, data: { status: "resolved", resolvedByType: "system", outcome: "settled" } });
    expect(await dueIds()).toContain(h.runId);
    expect(await sweep().handle(h.unit)).toBe("replayed_committed");
  });

  it("R-UA-5 the replay is under finalization ownership: while another owner holds the run's lock, nothing is written", async () => {
    const h = await historicalRun();
    const other = await takeFinalizationOwnership({ db: db.prisma(), databaseUrl: db.url(), controller: deps.controller! }, h.unit);
    if (other.kind !== "owned") throw new Error("could not take ownership for the test");
    try {
      const before = await snapshotOf(h.runId, h.issueId);
      expect(await sweep().handle(h.unit)).toBe("skipped_busy");
      expect(await snapshotOf(h.runId, h.issueId)).toEqual(before);
    } finally {
      await other.ownership.release();
    }
    expect(await sweep().handle(h.unit)).toBe("replayed_committed");
  });

  it("R-UA-5 only the historical code is replayed: a run failed with another export code is never selected or touched", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world);
    await failRun(prisma, { runId: run.runId, code: "native_workspace_sync_out_too_many_entries", message: "Too many entries." });
    expect(await dueIds()).not.toContain(run.runId);
    const before = await snapshotOf(run.runId, run.issueId);
    expect(await sweep().handle({ runId: run.runId, companyId: world.companyId, issueId: run.issueId })).toBe("not_historical");
    expect(await snapshotOf(run.runId, run.issueId)).toEqual(before);
  });

  it("the due selection can read the coordinators through its partial index (the code is a literal the index predicate matches)", async () => {
    const sql = dueHistoricalUnsafeSql(50);
    const plan = await db.prisma().$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
      return tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(`EXPLAIN ${sql.text}`, ...sql.values);
    });
    expect(plan.map((row) => row["QUERY PLAN"]).join("\n")).toContain("native_run_finalizations_historical_unsafe");
  });
});
