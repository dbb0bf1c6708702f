// Fence: the advisory lock `native-workspace-finalization:<company>:<run>` (FENCES.md row 1,
// R-OWN-1, R-OWN-2). The stale actor is a finalizer (the live path or a reconciler's sweep) that
// arrives while another holder has the run's lock but has written no owner receipt: the maintenance
// SQL's transaction, or an attestation admission in its own transaction. Only the lock stops it:
// there is no receipt to refuse, the coordinator is open, nothing else says "busy".
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizationLockKey, readFinalizationOwner } from "../../src/finalization/finalization-owner";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { preparedRun, readTree, writeTree, type World, useWorld } from "../finalization/finalization-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

/** A transaction holding the run's advisory lock the way the spec's maintenance SQL takes it. */
async function holdRunLock(companyId: string, runId: string): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: db.url(), application_name: "fence-test-maintenance" });
  await client.connect();
  await client.query("BEGIN");
  const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_xact_lock(hashtextextended($1, 0)) AS locked", [finalizationLockKey(companyId, runId)]);
  expect(rows[0]?.locked).toBe(true);
  return {
    release: async () => {
      await client.query("ROLLBACK");
      await client.end();
    },
  };
}

describe("fence: the run's advisory lock", () => {
  it("R-OWN-1, R-OWN-2: while another transaction holds the run's lock (no owner receipt anywhere), a finalizer is busy: no receipt, no workspace operation, no export, no retry spent, nothing on the host", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "locked-out.txt": "late" });
    const before = {
      run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } }),
      coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } }),
      operations: await prisma.workspaceOperation.count({ where: { runId: run.runId } }),
    };
    const exportsBefore = world.provider.exports;
    const lock = await holdRunLock(world.companyId, run.runId);
    try {
      expect(await finalizeRun(world.deps(), { runId: run.runId })).toEqual({ kind: "busy", reason: "lock_held" });
      const after = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
      expect(readFinalizationOwner(after.runnerProfileJson)).toEqual({ kind: "none" });
      expect(after.status).toBe("running");
      expect(await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } })).toEqual(before.coordinator);
      expect(await prisma.workspaceOperation.count({ where: { runId: run.runId } })).toBe(before.operations);
      expect(world.provider.exports).toBe(exportsBefore);
      expect((await readTree(world.hostPath))["locked-out.txt"]).toBeUndefined();
    } finally {
      await lock.release();
    }
    // The lock was all that stood in the way: once it is free the same call copies and commits.
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "committed" });
    expect((await readTree(world.hostPath))["locked-out.txt"]).toBe("late");
  });
});
