// The orphan sweep's restraint on a real PostgreSQL (R-ORP-1, R-ORP-2, R-ORP-3): a running run
// whose controller died is never turned into process_lost while the finalizer owns its accepted
// result, also before any receipt; the conditional write re-checks xmin and the durable result;
// a run without a result ends process_lost with its lease left as it is.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { markProcessLost, orphanSweep, PROCESS_LOST_CODE } from "../../src/recovery/sweeps/orphan-sweep";
import { acceptResult, buildWorld, claimedRun, preparedRun, type World } from "../finalization/finalization-fixture";
import { deadIdentity, markFinalizing, selfIdentity } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
});
afterAll(async () => {
  await world?.cleanup();
});

/** Records a dead process of this host as the run's controller (the worker that claimed it was SIGKILLed). */
async function orphan(runId: string): Promise<void> {
  const dead = await deadIdentity();
  await db.prisma().heartbeatRun.update({
    where: { id: runId },
    data: { controllerPid: dead.pid, controllerProcessStart: dead.startTime, controllerBootId: dead.bootId, controllerHost: dead.host },
  });
}

async function sweep() {
  return orphanSweep({ db: db.prisma(), controller: await selfIdentity() });
}

async function handleAll(units: Awaited<ReturnType<Awaited<ReturnType<typeof sweep>>["due"]>>) {
  const s = await sweep();
  const outcomes: Record<string, string> = {};
  for (const unit of units) outcomes[unit.runId] = await s.handle(unit);
  return outcomes;
}

describe("the orphan sweep", () => {
  it("R-ORP-1: a workspace_finalizing coordinator with an accepted result is the finalizer's, also before any receipt: never process_lost", async () => {
    const run = await preparedRun(world);
    await markFinalizing(db.prisma(), run.runId);
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(units).toHaveLength(1);
    expect(await handleAll(units)).toEqual({ [run.runId]: "left_finalizer_owns" });
    const after = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(after.status).toBe("running");
    expect(after.errorCode).toBeNull();
  });

  it("R-ORP-1: result_accepted (the finalizer has not even started) is left as well", async () => {
    const run = await preparedRun(world);
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "left_finalizer_owns" });
  });

  it("R-ORP-2: a result published after the sweep's snapshot wins: the conditional write re-checks xmin and the durable result", async () => {
    const run = await claimedRun(world);
    await orphan(run.runId);
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(units).toHaveLength(1);
    // Published between the selection and the write: it locks and updates the heartbeat row.
    await acceptResult(world, run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "left_finalizer_owns" });
    // Even forcing the decision past the policy, the conditional write refuses the stale row.
    expect(await markProcessLost(db.prisma(), units[0]!)).toBe("lost_race");
    expect((await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } })).status).toBe("running");
  });

  it("R-ORP-2: without a result the run ends process_lost in one conditional write; the task goes to people; the lease is left exactly as it was", async () => {
    const run = await claimedRun(world);
    await orphan(run.runId);
    const leaseBefore = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } });
    const units = (await (await sweep()).due(100)).filter((u) => u.runId === run.runId);
    expect(await handleAll(units)).toEqual({ [run.runId]: "process_lost" });
    const after = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(after).toMatchObject({ status: "failed", errorCode: PROCESS_LOST_CODE });
    expect((await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } })).phase).toBe("terminal_failure");
    expect((await db.prisma().issue.findUniqueOrThrow({ where: { id: run.issueId } })).status).toBe("blocked");
    expect(await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } })).toEqual(leaseBefore);
  });

  it("a run whose controller lives, or whose controller is on another host, is not selected", async () => {
    const live = await claimedRun(world);
    const self = await selfIdentity();
    await db.prisma().heartbeatRun.update({ where: { id: live.runId }, data: { controllerPid: self.pid, controllerProcessStart: self.startTime, controllerBootId: self.bootId, controllerHost: self.host } });
    const foreign = await claimedRun(world);
    await db.prisma().heartbeatRun.update({ where: { id: foreign.runId }, data: { controllerPid: 1, controllerProcessStart: "1", controllerBootId: "b", controllerHost: "another-host" } });
    const ids = (await (await sweep()).due(100)).map((u) => u.runId);
    expect(ids).not.toContain(live.runId);
    expect(ids).not.toContain(foreign.runId);
  });

  it("a run of THIS process that it no longer executes (its executor gave up, e.g. the database dropped the failure write) is an orphan; while a claim is in flight, or while it executes, it is not", async () => {
    const run = await claimedRun(world);
    const self = await selfIdentity();
    await db.prisma().heartbeatRun.update({ where: { id: run.runId }, data: { controllerPid: self.pid, controllerProcessStart: self.startTime, controllerBootId: self.bootId, controllerHost: self.host } });
    let executing = true;
    const sweep = orphanSweep({ db: db.prisma(), controller: self, executesHere: () => executing });
    expect((await sweep.due(100)).map((u) => u.runId)).not.toContain(run.runId);
    executing = false;
    const units = (await sweep.due(100)).filter((u) => u.runId === run.runId);
    expect(units).toHaveLength(1);
    expect(await sweep.handle(units[0]!)).toBe("process_lost");
  });
});
