// The one terminal writer of a run that fails before its result, on a real PostgreSQL
// (R-FO-1, R-FO-4, R-FO-6): what it refuses writes nothing at all; what it accepts writes the
// settled claim, the pin, the obligation and the failed run together. Both kinds of caller: the
// dispatcher's setup-failure handlers (no expected xmin) and the orphan sweep's conditional write
// (R-ORP-2: the heartbeat version it judged, and no accepted result).
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { failRunBeforeResult } from "../../src/recovery/file-recovery";
import { FILE_RECOVERY_CAUSE } from "../../src/records/causes";
import { readFileRecoveryEvidence } from "../../src/records/actions";
import { newPreparationClaim } from "../../src/records/preparation-claim";
import { acceptResult, claimedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { selfIdentity, writeBarrier } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

/** A claimed run with a `workspace_prepare` left running under a claim (as a failed seed leaves it). */
async function runWithClaim() {
  const run = await claimedRun(world);
  const claim = newPreparationClaim(await selfIdentity(), new Date());
  const op = await db.prisma().workspaceOperation.create({
    data: { companyId: world.companyId, runId: run.runId, issueId: run.issueId, phase: "workspace_prepare", status: "running", metadata: { leaseId: run.handle.leaseId, recoveryClaim: claim } },
  });
  return { ...run, claim, operationId: op.id };
}

async function snapshot(runId: string, leaseId: string, operationId: string) {
  const prisma = db.prisma();
  return {
    run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true, errorCode: true, updatedAt: true } }),
    lease: await prisma.environmentLease.findUniqueOrThrow({ where: { id: leaseId } }),
    operation: await prisma.workspaceOperation.findUniqueOrThrow({ where: { id: operationId } }),
    actions: await prisma.issueRecoveryAction.count({ where: { runId } }),
    coordinator: await prisma.nativeRunFinalization.findUnique({ where: { runId } }),
  };
}

describe("failRunBeforeResult", () => {
  it("R-FO-4 another owner's claim prevents cleanup: nothing is settled, pinned, opened or failed", async () => {
    const run = await runWithClaim();
    const before = await snapshot(run.runId, run.handle.leaseId, run.operationId);
    const outcome = await failRunBeforeResult(db.prisma(), {
      runId: run.runId,
      code: "workspace_prepare_failed",
      message: "seed failed",
      origin: "preparation_failure",
      leaseId: run.handle.leaseId,
      preparation: { operationId: run.operationId, token: "00000000-0000-4000-8000-000000000000" },
    });
    expect(outcome).toEqual({ kind: "refused", reason: "claim_other_owner" });
    expect(await snapshot(run.runId, run.handle.leaseId, run.operationId)).toEqual(before);
  });

  it("R-FO-4 a stale claim (expired) prevents cleanup as well; a missing operation too", async () => {
    const run = await runWithClaim();
    const expired = new Date(Date.now() - 1_000).toISOString();
    await db.prisma().$executeRaw`UPDATE workspace_operations SET metadata = jsonb_set(metadata, '{recoveryClaim,expiresAt}', to_jsonb(${expired}::text)) WHERE id = ${run.operationId}::uuid`;
    const before = await snapshot(run.runId, run.handle.leaseId, run.operationId);
    const input = { runId: run.runId, code: "workspace_prepare_failed", message: "seed failed", origin: "preparation_failure" as const, leaseId: run.handle.leaseId };
    expect(await failRunBeforeResult(db.prisma(), { ...input, preparation: { operationId: run.operationId, token: run.claim.token } })).toEqual({ kind: "refused", reason: "claim_stale" });
    expect(await failRunBeforeResult(db.prisma(), { ...input, preparation: { operationId: "00000000-0000-4000-8000-000000000001", token: run.claim.token } })).toEqual({ kind: "refused", reason: "claim_missing" });
    expect(await snapshot(run.runId, run.handle.leaseId, run.operationId)).toEqual(before);
  });

  it("R-FO-4 the exact live claim settles: the operation fails and its claim is cleared in the transaction that pins the lease, opens the obligation and fails the run", async () => {
    const run = await runWithClaim();
    const outcome = await failRunBeforeResult(db.prisma(), {
      runId: run.runId,
      code: "workspace_prepare_failed",
      message: "seed failed",
      origin: "preparation_failure",
      leaseId: run.handle.leaseId,
      preparation: { operationId: run.operationId, token: run.claim.token },
    });
    expect(outcome).toMatchObject({ kind: "files_retained", leaseId: run.handle.leaseId, pin: "pinned" });
    const after = await snapshot(run.runId, run.handle.leaseId, run.operationId);
    expect(after.run).toMatchObject({ status: "failed", errorCode: "workspace_prepare_failed" });
    expect(after.lease.status).toBe("pending_cleanup");
    expect(after.operation).toMatchObject({ status: "failed", errorCode: "workspace_prepare_failed" });
    expect((after.operation.metadata as Record<string, unknown>).recoveryClaim).toBeUndefined();
    const action = await db.prisma().issueRecoveryAction.findFirstOrThrow({ where: { runId: run.runId, cause: FILE_RECOVERY_CAUSE } });
    expect(readFileRecoveryEvidence(action.evidence)).toMatchObject({ origin: "preparation_failure", leaseId: run.handle.leaseId });
    // A repeat (a lost reply, a second handler) opens nothing more.
    expect(await failRunBeforeResult(db.prisma(), { runId: run.runId, code: "x", message: "x", origin: "provider_failure", leaseId: run.handle.leaseId })).toMatchObject({ kind: "already_settled" });
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(1);
  });

  it("R-FO-6 an export that already finalized creates no obligation, and an accepted result keeps its own path: the run fails alone, its lease untouched", async () => {
    const finalized = await claimedRun(world);
    await writeBarrier(db.prisma(), finalized.runId);
    const leaseBefore = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: finalized.handle.leaseId } });
    expect(await failRunBeforeResult(db.prisma(), { runId: finalized.runId, code: "x_failed", message: "x", origin: "provider_failure", leaseId: finalized.handle.leaseId })).toEqual({ kind: "failed", reason: "export_finalized" });
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: finalized.runId } })).toBe(0);
    expect(await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: finalized.handle.leaseId } })).toEqual(leaseBefore);

    const withResult = await claimedRun(world);
    await acceptResult(world, withResult.runId);
    expect(await failRunBeforeResult(db.prisma(), { runId: withResult.runId, code: "finalization_failed", message: "x", origin: "provider_failure", leaseId: withResult.handle.leaseId })).toEqual({ kind: "failed", reason: "accepted_result" });
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: withResult.runId } })).toBe(0);
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: withResult.handle.leaseId } })).status).toBe("active");
  });

  it("R-FO-1 a run that never had an allocation fails alone (no lease bound)", async () => {
    // Another run's accepted result is not this run's (the re-check reads this run's results only).
    await acceptResult(world, (await claimedRun(world)).runId);
    const run = await claimedRun(world);
    expect(await failRunBeforeResult(db.prisma(), { runId: run.runId, code: "provider_acquire_failed", message: "x", origin: "provider_failure", leaseId: null })).toEqual({ kind: "failed", reason: "no_allocation" });
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(0);
  });

  it("R-FO-3 a setup-failure handler whose run is gone (no row to lock) is told it is settled, and nothing is written", async () => {
    const run = await claimedRun(world);
    const before = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } });
    const gone = "00000000-0000-4000-8000-0000000000f0";
    expect(await failRunBeforeResult(db.prisma(), { runId: gone, code: "provider_acquire_failed", message: "x", origin: "provider_failure", leaseId: run.handle.leaseId })).toEqual({ kind: "already_settled", status: "missing" });
    expect(await db.prisma().issueRecoveryAction.count({ where: { runId: gone } })).toBe(0);
    expect(await db.prisma().runEvent.count({ where: { runId: gone } })).toBe(0);
    expect(await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } })).toEqual(before);
  });

  /** The heartbeat row's tuple version, as the orphan sweep reads it. */
  async function xminOf(runId: string): Promise<string> {
    const [row] = await db.prisma().$queryRaw<{ xmin: string }[]>`SELECT xmin::text AS xmin FROM heartbeat_runs WHERE id = ${runId}::uuid`;
    return row!.xmin;
  }

  it("R-ORP-2 the orphan sweep's write is a lost race, writing nothing, when the row is not the version it judged, and when a result was accepted although the version still matches (the durable-result re-check)", async () => {
    const prisma = db.prisma();
    const orphan = { code: "process_lost", message: "x", origin: "controller_lost" as const };
    const changed = await claimedRun(world);
    const stale = String(BigInt(await xminOf(changed.runId)) - 1n);
    expect(await failRunBeforeResult(prisma, { ...orphan, runId: changed.runId, expectXmin: stale })).toEqual({ kind: "lost_race" });

    const withResult = await claimedRun(world);
    await acceptResult(world, withResult.runId);
    expect(await failRunBeforeResult(prisma, { ...orphan, runId: withResult.runId, expectXmin: await xminOf(withResult.runId) })).toEqual({ kind: "lost_race" });

    for (const run of [changed, withResult]) {
      expect(await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId }, select: { status: true, errorCode: true } })).toEqual({ status: "running", errorCode: null });
      expect(await prisma.issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(0);
      expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } })).status).toBe("active");
    }
  });
});
