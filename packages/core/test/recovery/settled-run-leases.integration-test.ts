// A controller that settled its run and died before releasing the lease (the torture
// suite found such leases): the reconciler finishes the release by the run's outcome; a live
// controller's lease is left to it.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { settledRunLeasesSweep } from "../../src/recovery/sweeps/settled-run-leases-sweep";
import { preparedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, selfIdentity } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

async function setController(runId: string, identity: { pid: number; startTime: string; bootId: string; host: string }) {
  await db.prisma().heartbeatRun.update({ where: { id: runId }, data: { controllerPid: identity.pid, controllerProcessStart: identity.startTime, controllerBootId: identity.bootId, controllerHost: identity.host } });
}

describe("leases left active under settled runs", () => {
  it("a committed run whose controller died before its release: the sweep releases the lease as committed; a live controller's lease is left to it", async () => {
    const dead = await preparedRun(world, "done");
    const live = await preparedRun(world, "done");
    expect((await finalizeRun(world.deps(), { runId: dead.runId })).kind).toBe("committed");
    expect((await finalizeRun(world.deps(), { runId: live.runId })).kind).toBe("committed");
    await setController(dead.runId, await deadIdentity());
    await setController(live.runId, await selfIdentity());
    const sweep = settledRunLeasesSweep({ db: db.prisma(), registry: { forLease: () => world.provider } });
    const units = (await sweep.due(100)).filter((u) => u.runId === dead.runId || u.runId === live.runId);
    expect(units).toHaveLength(2);
    const outcomes = Object.fromEntries(await Promise.all(units.map(async (u) => [u.runId, await sweep.handle(u)])));
    expect(outcomes[live.runId]).toBe("left_controller_alive");
    // This test provider cannot destroy: the release stays pending (never active, never guessed).
    expect(outcomes[dead.runId]).not.toMatch(/^left_/);
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: dead.handle.leaseId } })).status).not.toBe("active");
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: live.handle.leaseId } })).status).toBe("active");
  });
});
