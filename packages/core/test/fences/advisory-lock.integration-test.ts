// Fence: the advisory lock `native-workspace-finalization:<company>:<run>` (FENCES.md row 1,
// R-OWN-1, R-OWN-2). The stale actor is a finalizer (the live path or a reconciler's sweep) that
// arrives while another holder has the run's lock but has written no owner receipt: the maintenance
// SQL's transaction, or an attestation admission in its own transaction. Only the lock stops it:
// there is no receipt to refuse, the coordinator is open, nothing else says "busy".
//
// The lock lives as long as its transaction: an owner idle past idle_in_transaction_session_timeout
// keeps it only by its probe (R-OWN-13), and a take that finds no run lets it go at once (R-OWN-6).
import pg from "pg";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizationLockKey, takeFinalizationOwnership } from "../../src/finalization/finalization-owner";
import { readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { CONTROLLER, preparedRun, readTree, writeTree, type World, useWorld } from "../finalization/finalization-fixture";

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

  /** Whether the run's lock is free now (taken and let go again by a probe connection). */
  async function lockIsFree(companyId: string, runId: string): Promise<boolean> {
    const client = new pg.Client({ connectionString: db.url(), application_name: "fence-test-probe" });
    await client.connect();
    try {
      const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked", [finalizationLockKey(companyId, runId)]);
      if (rows[0]?.locked) await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [finalizationLockKey(companyId, runId)]);
      return rows[0]?.locked === true;
    } finally {
      await client.end();
    }
  }

  it("R-OWN-13: with idle_in_transaction_session_timeout set, an owner idle for longer than it (only filesystem work) keeps its lock by its probe: its checks pass and a contender is busy", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world);
    const key = { companyId: world.companyId, runId: run.runId, issueId: run.issueId };
    const database = db.name();
    // New connections of this database (the owner's lock connection) get the timeout.
    await prisma.$executeRawUnsafe(`ALTER DATABASE "${database}" SET idle_in_transaction_session_timeout = '600ms'`);
    try {
      const attempt = await takeFinalizationOwnership({ db: prisma, databaseUrl: db.url(), controller: CONTROLLER }, key);
      if (attempt.kind !== "owned") throw new Error(`expected ownership, got ${attempt.kind}`);
      try {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        await attempt.ownership.assertHeld();
        expect(await takeFinalizationOwnership({ db: prisma, databaseUrl: db.url(), controller: { ...CONTROLLER, bootId: "contender" } }, key)).toEqual({ kind: "busy", reason: "lock_held" });
      } finally {
        expect(await attempt.ownership.release()).toEqual({ receiptCleared: true });
      }
    } finally {
      await prisma.$executeRawUnsafe(`ALTER DATABASE "${database}" RESET idle_in_transaction_session_timeout`);
    }
    expect(await lockIsFree(key.companyId, key.runId)).toBe(true);
  });

  it("R-OWN-6: a take for a run that is not there (another company's id, or not native) throws not_found, writes no receipt and lets the lock go", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world);
    const take = (key: { companyId: string; runId: string; issueId: string }) => takeFinalizationOwnership({ db: prisma, databaseUrl: db.url(), controller: CONTROLLER }, key);
    const otherCompany = { companyId: "00000000-0000-4000-8000-00000000c0c0", runId: run.runId, issueId: run.issueId };
    await expect(take(otherCompany)).rejects.toMatchObject({ code: "not_found", message: "Run was not found." });
    expect(await lockIsFree(otherCompany.companyId, run.runId)).toBe(true);
    await prisma.heartbeatRun.update({ where: { id: run.runId }, data: { runtimeMode: "legacy" } });
    const own = { companyId: world.companyId, runId: run.runId, issueId: run.issueId };
    await expect(take(own)).rejects.toMatchObject({ code: "not_found" });
    expect(await lockIsFree(own.companyId, run.runId)).toBe(true);
    expect(readFinalizationOwner((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } })).runnerProfileJson)).toEqual({ kind: "none" });
  });
});
