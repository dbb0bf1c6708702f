// Issue 23 part 1 (host affinity): the reconciler's sweeps act only on host-local work of their
// own host. The real finalization sweep, narrowed for host B, leaves host A's abandoned run alone
// (finalizing it would write A's workspace through B's path of that name) while host A finalizes
// it; lease-keyed units follow the lease's own host (local sandboxes) and pass for remote ones.
// No requirement id exists for these rules in REQUIREMENTS.md: named by the rule.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizationSweep } from "../../src/recovery/sweeps/finalization-sweep";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { preparedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, markFinalizing } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

async function abandoned() {
  const run = await preparedRun(world, "done");
  await markFinalizing(db.prisma(), run.runId);
  const dead = await deadIdentity();
  await db.prisma().heartbeatRun.update({ where: { id: run.runId }, data: { controllerPid: dead.pid, controllerProcessStart: dead.startTime, controllerBootId: dead.bootId, controllerHost: dead.host } });
  return run;
}

const finalizationOn = (hostId: string) => finalizationSweep({ ...world.deps(), hostId });

describe("host-bound sweeps (issue 23: sweeps act only on their own host's host-local work)", () => {
  it("host affinity: the finalization sweep of host B never selects a run of host A's workspace; host A's finalizes it", async () => {
    await db.prisma().executionWorkspace.update({ where: { id: world.workspaceId }, data: { hostId: "host-a" } });
    try {
      const run = await abandoned();
      expect((await finalizationSweep({ ...world.deps() }).due(1000)).map((u) => u.runId)).toContain(run.runId);
      expect((await finalizationOn("host-b").due(1000)).map((u) => u.runId)).not.toContain(run.runId);
      const onA = await finalizationOn("host-a").due(1000);
      expect(onA.map((u) => u.runId)).toContain(run.runId);
      expect(await finalizationOn("host-a").handle({ runId: run.runId, companyId: world.companyId })).toBe("committed");
    } finally {
      await db.prisma().executionWorkspace.update({ where: { id: world.workspaceId }, data: { hostId: null } });
    }
  });

  it("host affinity: an unbound workspace's run is swept by any host", async () => {
    const run = await abandoned();
    expect((await finalizationOn("host-b").due(1000)).map((u) => u.runId)).toContain(run.runId);
  });

  it("host affinity: lease units follow the lease's host: a local (host-local) lease only on its host, a remote lease on any", async () => {
    const lease = (hostId: string | null, nextCleanupAt: Date) =>
      db.prisma().environmentLease.create({
        data: { companyId: world.companyId, environmentId: world.environmentId, executionWorkspaceId: world.workspaceId, provider: "local", pluginId: "test.dir", leasePolicy: "retain_on_failure", status: "pending_cleanup", hostId, nextCleanupAt },
      });
    const localA = await lease("host-a", new Date(Date.now() - 120_000));
    const remote = await lease(null, new Date(Date.now() - 60_000));
    const registry = { forLease: () => { throw new Error("not called: only due() runs here"); } };
    const on = async (hostId: string) => (await leaseCleanupSweep({ db: db.prisma(), registry, hostId }).due(10)).map((u) => u.leaseId).filter((id) => id === localA.id || id === remote.id);
    expect(await on("host-b")).toEqual([remote.id]);
    expect(await on("host-a")).toEqual([localA.id, remote.id]);
  });
});
