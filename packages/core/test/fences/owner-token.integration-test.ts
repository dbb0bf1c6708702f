// Fence: the owner receipt and its token (FENCES.md row 2, R-OWN-9). The stale actor is an owner
// whose token was replaced (a takeover's exact replacement, or an attestation's release followed
// by the next owner's receipt) while its own lock connection still answers: it publishes late.
// Only the durable-token half of assertHeld/assertPublishable stops it; the lock-connection half
// passes (the connection is alive), so these tests fail if the token check is disabled.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { copybackProven } from "../../src/finalization/copyback-proven";
import { FINALIZATION_OWNER_KEY, readFinalizationOwner, takeFinalizationOwnership } from "../../src/finalization/finalization-owner";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { withTransaction } from "@copyback/db/client";
import { CONTROLLER, preparedRun, readTree, writeTree, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, receiptOf } from "../recovery/recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

/** The next owner's receipt, written over the current one the way a takeover replaces it (token-checked). */
const replaceReceiptSql = (runId: string, token: string) => `
  UPDATE heartbeat_runs
  SET runner_profile_json = runner_profile_json || jsonb_build_object('${FINALIZATION_OWNER_KEY}', '${JSON.stringify({ token, host: "next-host", pid: 4242, processStart: "99", bootId: "next-boot" })}'::jsonb)
  WHERE id = '${runId}'::uuid AND runner_profile_json ? '${FINALIZATION_OWNER_KEY}'`;

describe("fence: the owner receipt's token", () => {
  it("R-OWN-9: an owner whose token was replaced publishes nothing: assertHeld and assertPublishable refuse although its lock connection answers, and its release leaves the new owner's receipt", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world);
    const attempt = await takeFinalizationOwnership({ db: prisma, databaseUrl: db.url(), controller: CONTROLLER }, { companyId: world.companyId, runId: run.runId, issueId: run.issueId });
    if (attempt.kind !== "owned") throw new Error(`expected ownership, got ${attempt.kind}`);
    const stale = attempt.ownership;
    // Before the replacement both halves pass.
    await stale.assertHeld();
    await withTransaction(prisma, (tx) => stale.assertPublishable(tx));

    const next = receiptOf(await deadIdentity(), "next-owner-token-0123456789");
    await prisma.$executeRaw`
      UPDATE heartbeat_runs
      SET runner_profile_json = runner_profile_json || jsonb_build_object(${FINALIZATION_OWNER_KEY}::text, ${JSON.stringify(next)}::jsonb)
      WHERE id = ${run.runId}::uuid AND runner_profile_json -> ${FINALIZATION_OWNER_KEY} ->> 'token' = ${stale.receipt.token}`;

    await expect(stale.assertHeld()).rejects.toMatchObject({ code: "finalization_ownership_lost" });
    await expect(withTransaction(prisma, (tx) => stale.assertPublishable(tx))).rejects.toMatchObject({ code: "finalization_ownership_lost" });
    expect(await stale.release()).toEqual({ receiptCleared: false });
    const after = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(readFinalizationOwner(after.runnerProfileJson)).toEqual({ kind: "receipt", receipt: next });
  });

  it("R-OWN-9, R-LK-6: the token replaced during the export: the merge's authorize hook refuses, nothing reaches the host, no barrier, nothing committed", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "stale-owner.txt": "must not land" });
    world.provider.faults.onExport = async () => {
      await prisma.$executeRawUnsafe(replaceReceiptSql(run.runId, "replaced-during-export-0123456789"));
    };
    try {
      await expect(finalizeRun(world.deps(), { runId: run.runId })).rejects.toMatchObject({ code: "finalization_ownership_lost" });
    } finally {
      world.provider.faults.onExport = undefined;
    }
    expect((await readTree(world.hostPath))["stale-owner.txt"]).toBeUndefined();
    expect(await copybackProven(prisma, { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(false);
    expect((await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } })).phase).toBe("workspace_finalizing");
    const after = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(after.status).toBe("running");
    expect(readFinalizationOwner(after.runnerProfileJson)).toMatchObject({ kind: "receipt", receipt: { token: "replaced-during-export-0123456789" } });
  });

  it("R-OWN-9: the token replaced once the barrier is written: the commit transaction's assertPublishable refuses; the barrier stands and nothing is committed", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "after-barrier.txt": "copied" });
    // Inside the barrier's transaction (its 'workspace.merged' event): the receipt is replaced as
    // that transaction commits, so only the next (commit) transaction's check can see it.
    await prisma.$executeRawUnsafe(`CREATE OR REPLACE FUNCTION test_replace_owner() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.code = 'workspace.merged' THEN
          ${replaceReceiptSql(run.runId, "replaced-after-barrier-0123456789")};
        END IF;
        RETURN NEW;
      END $$`);
    await prisma.$executeRawUnsafe(`CREATE TRIGGER test_replace_owner AFTER INSERT ON run_events FOR EACH ROW EXECUTE FUNCTION test_replace_owner()`);
    try {
      await expect(finalizeRun(world.deps(), { runId: run.runId })).rejects.toMatchObject({ code: "finalization_ownership_lost" });
    } finally {
      await prisma.$executeRawUnsafe(`DROP TRIGGER test_replace_owner ON run_events`);
      await prisma.$executeRawUnsafe(`DROP FUNCTION test_replace_owner()`);
    }
    expect(await copybackProven(prisma, { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(true);
    expect((await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } })).phase).toBe("arbitrating");
    const after = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(after.status).toBe("running");
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: run.issueId } })).status).toBe("in_progress");
    expect(readFinalizationOwner(after.runnerProfileJson)).toMatchObject({ kind: "receipt", receipt: { token: "replaced-after-barrier-0123456789" } });
  });
});
