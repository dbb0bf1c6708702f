// One open recovery action per run with an accepted result, on a real PostgreSQL (the torture
// checker's duplicate_holds). The sequence: a reconciler's finalization sweep selects a run while
// its export is still being retried; the owner of the third attempt exhausts the budget (the
// export-only-retry hold opens, the coordinator settles terminal_failure) and is killed before its
// release clears its receipt; the sweep then handles the unit it selected earlier: finalizeRun
// judges the dead owner's receipt (no success barrier) before it reads the settled coordinator,
// and opens the unverified-owner hold on a run that already holds one. The owner-holds sweep never
// resolves it: the run still carries that receipt.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { OPEN_RECOVERY_ACTION_STATUSES } from "../../src/records/actions";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../src/records/causes";
import { finalizationSweep } from "../../src/recovery/sweeps/finalization-sweep";
import { ownerHoldsSweep } from "../../src/recovery/sweeps/owner-holds-sweep";
import { preparedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { attestOwnerStop } from "../../src/recovery/operator/attest-owner-stop";
import { deadIdentity, leaveReceipt, liveDeps, markFinalizing, receiptOf } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

describe("duplicate holds", () => {
  it("R-EX-1 R-OWN-11 R-ATT-3: a run whose export retries are exhausted keeps one open action when its owner died before clearing its receipt and a sweep that selected it earlier handles it", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    const sweep = finalizationSweep({ ...(await liveDeps(world)), executesHere: () => false });
    world.provider.faults.exportFailures = 1_000;
    let selected: { runId: string; companyId: string } | undefined;
    let now = new Date();
    const deps = () => ({ ...world.deps(), now: () => now });
    const nextAttempt = (outcome: unknown) => new Date((outcome as { nextAttemptAt: Date }).nextAttemptAt.getTime() + 1);
    try {
      const first = await finalizeRun(deps(), { runId: run.runId });
      expect(first).toMatchObject({ kind: "retryable_failure" });
      now = nextAttempt(first);
      const second = await finalizeRun(deps(), { runId: run.runId });
      expect(second).toMatchObject({ kind: "retryable_failure" });
      now = nextAttempt(second);
      // The retry is due (the selection reads the database's clock): the reconciler's pass selects
      // its batch now and handles the units one by one.
      await prisma.nativeRunFinalization.update({ where: { runId: run.runId }, data: { nextAttemptAt: new Date(Date.now() - 1_000) } });
      selected = (await sweep.due(50)).find((unit) => unit.runId === run.runId);
      expect(selected).toBeDefined();
      // Meanwhile the live owner's third attempt exhausts the budget.
      const third = await finalizeRun(deps(), { runId: run.runId });
      expect(third).toMatchObject({ kind: "terminal_failure", code: "native_workspace_sync_out_retry_exhausted" });
    } finally {
      world.provider.faults.exportFailures = 0;
    }
    // That owner was killed after the terminal transaction committed and before release() cleared
    // its receipt: the receipt of a process that is gone stays on the run.
    await leaveReceipt(prisma, run.runId, receiptOf(await deadIdentity()));
    const openActions = () =>
      prisma.issueRecoveryAction.findMany({ where: { runId: run.runId, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } }, orderBy: { createdAt: "asc" } });
    expect((await openActions()).map((a) => a.cause)).toEqual([EXPORT_RETRY_EXHAUSTED_CAUSE]);

    // The earlier pass reaches its unit, then the owner-holds sweep runs (twice: the board's steady state).
    await sweep.handle(selected as { runId: string; companyId: string });
    const holds = ownerHoldsSweep({ db: prisma });
    await holds.handle("pass");
    await holds.handle("pass");

    const coordinator = await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } });
    expect(coordinator.phase).toBe("terminal_failure");
    expect(await prisma.nativeRunResult.count({ where: { runId: run.runId, schemaStatus: "accepted" } })).toBe(1);
    // At most one open action per run with an accepted result: the export-only-retry hold.
    const open = await openActions();
    expect(open.map((a) => a.cause)).toEqual([EXPORT_RETRY_EXHAUSTED_CAUSE]);
  });

  it("R-ATT-3 R-EX-1: when the copyback an attestation admitted exhausts its export retries, the run holds one open action as the terminal failure commits", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    // A killed owner's attempt, held and attested (R-ATT-3); the reconciler then copies back.
    await markFinalizing(prisma, run.runId);
    const receipt = receiptOf(await deadIdentity());
    await leaveReceipt(prisma, run.runId, receipt);
    let now = new Date();
    const deps = async () => ({ ...(await liveDeps(world)), now: () => now });
    const held = await finalizeRun(await deps(), { runId: run.runId });
    if (held.kind !== "owner_unverified") throw new Error(`expected a hold, got ${held.kind}`);
    await attestOwnerStop(prisma, {
      companyId: world.companyId, issueId: run.issueId, actor: { type: "user", id: null }, actionId: held.actionId, runId: run.runId,
      ownerToken: receipt.token, controllerAndCopybackStopped: true, stopEvidence: "worker pod gone, no tar left",
    });
    world.provider.faults.exportFailures = 1_000;
    try {
      for (;;) {
        const outcome = await finalizeRun(await deps(), { runId: run.runId });
        if (outcome.kind === "terminal_failure") break;
        expect(outcome).toMatchObject({ kind: "retryable_failure" });
        now = new Date((outcome as { nextAttemptAt: Date }).nextAttemptAt.getTime() + 1);
      }
    } finally {
      world.provider.faults.exportFailures = 0;
    }
    // The terminal transaction is what the board and the checker read next, before any sweep.
    const open = await prisma.issueRecoveryAction.findMany({ where: { runId: run.runId, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } } });
    expect(open.map((a) => a.cause)).toEqual([EXPORT_RETRY_EXHAUSTED_CAUSE]);
  });
});
