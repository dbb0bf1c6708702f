// Found by the torture suite (seed 2): the transaction that fails a run whose agent has
// run is cut (a dropped connection, an idle-transaction timeout while the worker was paused). The
// failure is not recorded, so the run is still `running` and nothing pins its sandbox or opens its
// file-recovery obligation. The executor must then leave the lease exactly as it is, bound and
// active, for the orphan sweep (R-ORP-2: process_lost, the pin and the obligation in one
// transaction): releasing it as a "failed" run's lease would leave a sandbox with the agent's only
// files released under a running run, which no held-lease rule holds, so the next run of a
// reuse_by_environment environment reuses it and reseeds it (R-ORP-3, R-FO-1).
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Prisma } from "@copyback/db";
import { leaseHeldSql } from "../../src/leases/lease-holds";
import { FILE_RECOVERY_CAUSE } from "../../src/records/causes";
import { orphanSweep } from "../../src/recovery/sweeps/orphan-sweep";
import { PLAIN_LOCAL_PLUGIN, submitResult, useFakeFaultWorld } from "./dispatch-fixture";
import { terminateConnectionOn } from "./terminate-connection";

const world = useFakeFaultWorld();

/** The terminal writer's move of the run to `failed` (recovery/file-recovery.ts). */
const RUN_FAILED = "OLD.status = 'running' AND NEW.status = 'failed'";

async function held(leaseId: string): Promise<boolean> {
  const rows = await world.db.$queryRaw<{ held: boolean }[]>(Prisma.sql`SELECT ${leaseHeldSql("l")} AS held FROM environment_leases l WHERE l.id = ${leaseId}::uuid`);
  return rows[0]?.held === true;
}

describe("a run whose failure could not be written", () => {
  it("R-ORP-3 R-FO-1: the agent exited without a result and the transaction failing the run was cut: the sandbox stays bound and active, the next run of the reuse_by_environment environment does not reuse or reseed it, and the orphan sweep pins it with the file-recovery obligation, the agent's file kept", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, policy: "reuse_by_environment", files: { "README.md": "host\n" }, script: "mkdir -p work && echo 'half done' > work/partial.txt && exit 3" });
    const remove = await terminateConnectionOn(world.db, "heartbeat_runs", RUN_FAILED, { times: 1_000 });
    let runId: string;
    try {
      runId = await world.runOnce(task);
    } finally {
      await remove();
    }
    const left = await world.state(runId);
    expect(left.run.status).toBe("running");
    expect(left.codes).not.toContain("run.failed");
    expect(left.codes).not.toContain("lease.released");
    expect(left.leases).toHaveLength(1);
    const lease = left.leases[0]!;
    // Not released, not stopped for reuse: still this running run's.
    expect(lease).toMatchObject({ status: "active", runId, leasePolicy: "reuse_by_environment" });
    const partial = path.join(world.instanceRoot, "sandboxes", lease.providerLeaseId!, "workspace", "work", "partial.txt");
    expect(await readFile(partial, "utf8")).toBe("half done\n");

    // Another task on the same environment and execution workspace: the lease is busy, never reused.
    const second = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, environmentId: task.environmentId, workspaceId: task.workspaceId, script: submitResult() });
    const secondRun = await world.runOnce(second, { deps: { leaseWaitMs: 200 } });
    const s2 = await world.state(secondRun);
    expect(s2.leases.map((l) => l.id)).not.toContain(lease.id);
    expect(s2.events.filter((e) => e.code === "lease.acquired").map((e) => (e.payload as { leaseId: string }).leaseId)).not.toContain(lease.id);
    expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ runId, status: "active" });
    expect(await readFile(partial, "utf8")).toBe("half done\n");

    // R-ORP-2: the run is no longer executed here; the orphan sweep ends it and keeps the files.
    const sweep = orphanSweep({ db: world.db, controller: world.deps().controller, executesHere: () => false });
    const units = (await sweep.due(100)).filter((u) => u.runId === runId);
    expect(units).toHaveLength(1);
    expect(await sweep.handle(units[0]!)).toBe("process_lost");
    const done = await world.state(runId);
    expect(done.run).toMatchObject({ status: "failed", errorCode: "process_lost" });
    const actions = await world.db.issueRecoveryAction.findMany({ where: { runId } });
    expect(actions.map((a) => [a.cause, a.leaseId])).toEqual([[FILE_RECOVERY_CAUSE, lease.id]]);
    expect(await held(lease.id)).toBe(true);
    expect(await readFile(partial, "utf8")).toBe("half done\n");
  });
});
