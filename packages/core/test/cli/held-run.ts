// A run held by an unverified copyback owner, built the way production gets there: a prepared
// run with an accepted result whose owner receipt names a controller on another host (which no
// probe can verify), then finalizeRun, which opens the board-owned hold (R-ORP-4). And a
// snapshot of everything an attestation could write, for "nothing written" checks.
import { randomBytes } from "node:crypto";
import type { PrismaClient } from "@copyback/db/client";
import { FINALIZATION_OWNER_KEY, type FinalizationOwnerReceipt } from "../../src/records/finalization-owner-receipt";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { OWNER_UNVERIFIED_CAUSE } from "../../src/records/causes";
import { preparedRun, type World } from "../finalization/finalization-fixture";

export interface HeldRun {
  runId: string;
  issueId: string;
  actionId: string;
  token: string;
  receipt: FinalizationOwnerReceipt;
}

export async function writeReceipt(
  db: PrismaClient,
  runId: string,
  receipt: unknown,
): Promise<void> {
  await db.$executeRaw`
    UPDATE heartbeat_runs
    SET runner_profile_json = runner_profile_json || jsonb_build_object(${FINALIZATION_OWNER_KEY}::text, ${JSON.stringify(receipt)}::jsonb)
    WHERE id = ${runId}::uuid`;
}

export async function heldRun(world: World): Promise<HeldRun> {
  const run = await preparedRun(world);
  const receipt: FinalizationOwnerReceipt = {
    token: randomBytes(16).toString("hex"),
    host: "controller-host-elsewhere",
    pid: 4242,
    processStart: "1234",
    bootId: "boot-elsewhere",
  };
  await writeReceipt(world.db, run.runId, receipt);
  const outcome = await finalizeRun(world.deps(), { runId: run.runId });
  if (outcome.kind !== "owner_unverified")
    throw new Error(`fixture: expected owner_unverified, got ${outcome.kind}`);
  const action = await world.db.issueRecoveryAction.findFirstOrThrow({
    where: { runId: run.runId, cause: OWNER_UNVERIFIED_CAUSE, status: "active" },
  });
  return {
    runId: run.runId,
    issueId: run.issueId,
    actionId: action.id,
    token: receipt.token,
    receipt,
  };
}

/** Every row an attestation touches or could touch, for before/after equality. */
export async function attestationState(db: PrismaClient, held: { runId: string; issueId: string }) {
  const run = await db.heartbeatRun.findUniqueOrThrow({ where: { id: held.runId } });
  return {
    run,
    issue: await db.issue.findUniqueOrThrow({ where: { id: held.issueId } }),
    coordinator: await db.nativeRunFinalization.findUnique({ where: { runId: held.runId } }),
    actions: await db.issueRecoveryAction.findMany({
      where: { issueId: held.issueId },
      orderBy: { createdAt: "asc" },
    }),
    leases: await db.environmentLease.findMany({
      where: { runId: held.runId },
      orderBy: { createdAt: "asc" },
    }),
    results: await db.nativeRunResult.findMany({
      where: { runId: held.runId },
      orderBy: { createdAt: "asc" },
    }),
    activity: await db.activityLog.findMany({
      where: { companyId: run.companyId },
      orderBy: { createdAt: "asc" },
    }),
    events: await db.runEvent.findMany({
      where: { runId: held.runId },
      orderBy: { createdAt: "asc" },
    }),
  };
}
