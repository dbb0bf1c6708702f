// The reconciler's finalization sweep on a real PostgreSQL (R-OWN-2, R-OWN-3, R-OWN-4):
// due selection through the index, fair across companies; a busy run is skipped with
// nothing written and no retry spent; a stale snapshot cannot start an export after live
// finalization published a delay or a terminal failure; a late failure never overwrites a commit.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { advanceFinalization } from "../../src/records/coordinator";
import { finalizationLockKey } from "../../src/finalization/finalization-owner";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { finalizationSweep } from "../../src/recovery/sweeps/finalization-sweep";
import { failRun } from "../../src/runs/settle-run";
import { buildWorld, preparedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, markFinalizing, selfIdentity } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

/** A run whose live controller died mid-copyback and left no receipt (cleared, or never written). */
async function abandoned() {
  const run = await preparedRun(world, "done");
  await markFinalizing(db.prisma(), run.runId);
  const dead = await deadIdentity();
  await db.prisma().heartbeatRun.update({ where: { id: run.runId }, data: { controllerPid: dead.pid, controllerProcessStart: dead.startTime, controllerBootId: dead.bootId, controllerHost: dead.host } });
  return run;
}

const sweep = () => finalizationSweep({ ...world.deps() });

async function counts(runId: string) {
  const prisma = db.prisma();
  return {
    operations: await prisma.workspaceOperation.count({ where: { runId } }),
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } }),
    events: await prisma.runEvent.count({ where: { runId } }),
  };
}

describe("the finalization sweep", () => {
  it("selects unfinished coordinators that are due, the oldest of each company first, and finalizes them with the live path's finalizeRun", async () => {
    const run = await abandoned();
    const due = await sweep().due(1000);
    expect(due.map((u) => u.runId)).toContain(run.runId);
    expect(await sweep().handle({ runId: run.runId, companyId: world.companyId })).toBe("committed");
    expect((await sweep().due(1000)).map((u) => u.runId)).not.toContain(run.runId);
  });

  it("is fair across companies: a batch takes the oldest due unit of every company before a second one of any", async () => {
    const other = await buildWorld(db.prisma(), db.url());
    try {
      const a1 = await abandoned();
      const a2 = await abandoned();
      const b = await preparedRun(other, "done");
      await markFinalizing(db.prisma(), b.runId);
      const batch = await finalizationSweep({ ...world.deps() }).due(2);
      const companies = new Set(batch.map((u) => u.companyId));
      expect(companies).toEqual(new Set([world.companyId, other.companyId]));
      expect([a1.runId, a2.runId, b.runId]).toEqual(expect.arrayContaining(batch.map((u) => u.runId)));
    } finally {
      await other.cleanup();
    }
  });

  it("R-OWN-2: a run whose lock is held elsewhere is skipped: no workspace operation, no retry spent, nothing written", async () => {
    const run = await abandoned();
    const holder = new pg.Client({ connectionString: db.url() });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [finalizationLockKey(world.companyId, run.runId)]);
      const before = await counts(run.runId);
      expect(await sweep().handle({ runId: run.runId, companyId: world.companyId })).toBe("busy");
      expect(await counts(run.runId)).toEqual(before);
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined);
      await holder.end();
    }
  });

  it("R-OWN-3: a stale sweep snapshot cannot start an export after live finalization published a delay", async () => {
    const run = await abandoned();
    const units = (await sweep().due(1000)).filter((u) => u.runId === run.runId);
    expect(units).toHaveLength(1);
    // The live path publishes a retryable failure with a retry time after the sweep selected the run.
    await db.prisma().$transaction((tx) =>
      advanceFinalization(tx, { runId: run.runId, from: ["workspace_finalizing"], to: "retryable_failure", patch: { failureCode: "provider_export_failed", nextAttemptAt: new Date(Date.now() + 3_600_000) } }),
    );
    const exportsBefore = world.provider.exports;
    const before = await counts(run.runId);
    expect(await sweep().handle(units[0]!)).toBe("not_finalizable");
    expect(world.provider.exports).toBe(exportsBefore);
    expect((await counts(run.runId)).operations).toBe(before.operations);
    expect((await counts(run.runId)).coordinator).toEqual(before.coordinator);
  });

  it("R-OWN-3: a stale sweep snapshot cannot start an export after live finalization published a terminal failure", async () => {
    const run = await abandoned();
    const units = (await sweep().due(1000)).filter((u) => u.runId === run.runId);
    await failRun(db.prisma(), { runId: run.runId, code: "workspace_merge_conflict", message: "conflict" });
    const exportsBefore = world.provider.exports;
    expect(await sweep().handle(units[0]!)).toBe("not_finalizable");
    expect(world.provider.exports).toBe(exportsBefore);
  });

  it("R-OWN-4: a committed coordinator is never overwritten by a late failure", async () => {
    const run = await preparedRun(world, "done");
    expect((await finalizeRun(world.deps(), { runId: run.runId })).kind).toBe("committed");
    expect(await failRun(db.prisma(), { runId: run.runId, code: "late_export_failure", message: "late" })).toEqual({ kind: "already_finished", status: "succeeded" });
    const moved = await db.prisma().$transaction((tx) =>
      advanceFinalization(tx, { runId: run.runId, from: ["workspace_finalizing", "arbitrating"], to: "terminal_failure", patch: { failureCode: "late" } }),
    );
    expect(moved).toBe(false);
    expect(await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } })).toMatchObject({ phase: "committed", failureCode: null });
    expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("succeeded");
  });

  it("result_accepted: no export while the agent's recorded process lives, whoever the controller is; a controller that gave up on the run does not block it", async () => {
    const run = await preparedRun(world, "done");
    const self = await selfIdentity();
    await db.prisma().heartbeatRun.update({ where: { id: run.runId }, data: { controllerPid: self.pid, controllerProcessStart: self.startTime, controllerBootId: self.bootId, controllerHost: self.host } });
    // The agent is this (live) test process: it may still write after its finish call.
    await db.prisma().$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object('agentProcess', ${JSON.stringify({ ...self, recordedAt: new Date().toISOString() })}::jsonb) WHERE id = ${run.runId}::uuid`;
    let executing = false;
    const sweep = finalizationSweep({ ...world.deps(), controller: self, executesHere: () => executing });
    const exportsBefore = world.provider.exports;
    expect(await sweep.handle({ runId: run.runId, companyId: world.companyId })).toBe("skipped_agent_alive");
    // The agent is gone; the controller (this process) still executes the run: left to it.
    const dead = await deadIdentity();
    await db.prisma().$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object('agentProcess', ${JSON.stringify({ ...dead, recordedAt: new Date().toISOString() })}::jsonb) WHERE id = ${run.runId}::uuid`;
    executing = true;
    expect(await sweep.handle({ runId: run.runId, companyId: world.companyId })).toBe("skipped_controller_alive");
    expect(world.provider.exports).toBe(exportsBefore);
    // The controller gave up on it (it no longer executes it): the sweep finalizes.
    executing = false;
    expect(await sweep.handle({ runId: run.runId, companyId: world.companyId })).toBe("committed");
  });
});
