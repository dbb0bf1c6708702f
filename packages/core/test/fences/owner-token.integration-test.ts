// Fence: the owner receipt and its token (FENCES.md row 2, R-OWN-9). The stale actor is an owner
// whose token was replaced (a takeover's exact replacement, or an attestation's release followed
// by the next owner's receipt) while its own lock connection still answers: it publishes late.
// Only the durable-token half of assertHeld/assertPublishable stops it; the lock-connection half
// passes (the connection is alive), so these tests fail if the token check is disabled.
//
// Beside the token, three guards of the same shells (each a survivor of `pnpm mutation:shells`
// until these tests): the take's conditional receipt write (a receipt that appeared between the
// take's read and its write: busy, nothing of the taker's written), publication's own released
// flag (an owner whose release has begun, while its connection and token still answer), and the
// row lock (`FOR UPDATE`) publication's token read holds until its transaction ends.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { copybackProven } from "../../src/records/copyback-proven";
import { finalizationLockKey, takeFinalizationOwnership } from "../../src/finalization/finalization-owner";
import { FINALIZATION_OWNER_KEY, readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { withTransaction } from "@copyback/db/client";
import { CONTROLLER, preparedRun, readTree, writeTree, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, receiptOf, selfIdentity } from "../recovery/recovery-fixture";
import pg from "pg";
import { holdTableLock, waitForLockWaiters } from "./fences-fixture";

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

  it("R-OWN-7, R-OWN-8: a receipt written between the take's read and its write (an owner that lost its lock connection, writing late) is never overwritten: busy owner_receipt_changed, the late owner's receipt stands, the lock is let go", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world);
    const key = { companyId: world.companyId, runId: run.runId, issueId: run.issueId };
    const late = receiptOf(await selfIdentity(), "late-owner-token-0123456789");
    // The take reads no receipt; its conditional write waits behind the table lock while the late
    // owner's receipt is written and committed.
    const lock = await holdTableLock(db.url(), "heartbeat_runs");
    const attempt = takeFinalizationOwnership({ db: prisma, databaseUrl: db.url(), controller: CONTROLLER }, key);
    try {
      await waitForLockWaiters(db.url(), "heartbeat_runs");
      await lock.client.query(
        `UPDATE heartbeat_runs SET runner_profile_json = COALESCE(runner_profile_json, '{}'::jsonb) || jsonb_build_object($2::text, $3::jsonb) WHERE id = $1::uuid`,
        [run.runId, FINALIZATION_OWNER_KEY, JSON.stringify(late)],
      );
    } finally {
      await lock.release();
    }
    expect(await attempt).toEqual({ kind: "busy", reason: "owner_receipt_changed" });
    const after = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(readFinalizationOwner(after.runnerProfileJson)).toEqual({ kind: "receipt", receipt: late });
    // The refused take closed its lock connection: the advisory lock is free.
    const probe = new pg.Client({ connectionString: db.url() });
    await probe.connect();
    try {
      const { rows } = await probe.query<{ locked: boolean }>("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked", [finalizationLockKey(key.companyId, key.runId)]);
      expect(rows[0]?.locked).toBe(true);
    } finally {
      await probe.end();
    }
  });

  it("R-OWN-9: an owner whose release has begun publishes nothing: assertHeld and assertPublishable refuse while its lock connection and its token still answer", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world);
    const attempt = await takeFinalizationOwnership({ db: prisma, databaseUrl: db.url(), controller: CONTROLLER }, { companyId: world.companyId, runId: run.runId, issueId: run.issueId });
    if (attempt.kind !== "owned") throw new Error(`expected ownership, got ${attempt.kind}`);
    const owner = attempt.ownership;
    // The release's token-checked clear waits behind the table lock: until it commits the token
    // is still on the row and the lock connection (closed only after the clear) still answers.
    const lock = await holdTableLock(db.url(), "heartbeat_runs");
    let releasing: Promise<{ receiptCleared: boolean }> | undefined;
    try {
      releasing = owner.release();
      await waitForLockWaiters(db.url(), "heartbeat_runs");
      const [row] = await prisma.$queryRaw<{ token: string }[]>`SELECT runner_profile_json -> ${FINALIZATION_OWNER_KEY} ->> 'token' AS token FROM heartbeat_runs WHERE id = ${run.runId}::uuid`;
      expect(row?.token).toBe(owner.receipt.token);
      await expect(owner.assertHeld()).rejects.toMatchObject({ code: "finalization_ownership_lost" });
      await expect(withTransaction(prisma, (tx) => owner.assertPublishable(tx))).rejects.toMatchObject({ code: "finalization_ownership_lost" });
    } finally {
      await lock.release();
    }
    expect(await releasing).toEqual({ receiptCleared: true });
    expect(readFinalizationOwner((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } })).runnerProfileJson)).toEqual({ kind: "none" });
  });

  it("R-OWN-9: publication's token check holds the run row until its transaction ends: a takeover's token-checked replacement cannot land between the check and the commit", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world);
    const attempt = await takeFinalizationOwnership({ db: prisma, databaseUrl: db.url(), controller: CONTROLLER }, { companyId: world.companyId, runId: run.runId, issueId: run.issueId });
    if (attempt.kind !== "owned") throw new Error(`expected ownership, got ${attempt.kind}`);
    const owner = attempt.ownership;
    const contender = new pg.Client({ connectionString: db.url(), application_name: "fence-test-contender" });
    await contender.connect();
    try {
      await contender.query("SET lock_timeout = '300ms'");
      const next = receiptOf(await deadIdentity(), "next-owner-token-0123456789");
      const replace = () =>
        contender.query(
          `UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object($2::text, $3::jsonb) WHERE id = $1::uuid AND runner_profile_json -> $2::text ->> 'token' = $4`,
          [run.runId, FINALIZATION_OWNER_KEY, JSON.stringify(next), owner.receipt.token],
        );
      await withTransaction(prisma, async (tx) => {
        await owner.assertPublishable(tx);
        // Between the check and the commit of the owner's write, the replacement waits (here: gives up).
        await expect(replace()).rejects.toMatchObject({ code: "55P03" });
      });
      expect(readFinalizationOwner((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } })).runnerProfileJson)).toMatchObject({ kind: "receipt", receipt: { token: owner.receipt.token } });
      // Once the publishing transaction ended, the same replacement goes through.
      expect((await replace()).rowCount).toBe(1);
    } finally {
      await contender.end();
      await owner.release();
    }
  });
});
