// Fence: the success barrier, a `workspace_finalize` operation `succeeded` for the run's company,
// run and issue (FENCES.md row 3, copyback-proven.ts; R-OWN-11, R-FO-2). The stale actor is a
// controller that exited on this host mid-copyback, leaving its receipt: its tar children may live
// on. A contender may take the copyback over only when the barrier proves it finished; every
// look-alike (a prepared workspace, a failed or running finalize, another run's or another
// issue's or company's barrier) leaves it held for an operator. Only the barrier decides here: the
// controller is dead, the lock is free, the coordinator is open.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { copybackProven } from "../../src/records/copyback-proven";
import { readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { OWNER_UNVERIFIED_CAUSE } from "../../src/records/causes";
import { preparedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, leaveReceipt, liveDeps, markFinalizing, receiptOf, writeBarrier } from "../recovery/recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

describe("fence: the success barrier", () => {
  it("R-OWN-11, R-FO-2: a dead owner's copyback is taken over only on its own barrier: a prepared workspace, a failed or running finalize, and the barriers of another run, issue or company all leave one operator hold, no export, the receipt in place", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    const other = await preparedRun(world, "done");
    await markFinalizing(prisma, run.runId);
    const receipt = receiptOf(await deadIdentity());
    await leaveReceipt(prisma, run.runId, receipt);
    const otherCompany = await prisma.company.create({ data: { name: `Other ${randomUUID()}`, issuePrefix: "OTH" } });
    const finalize = (data: { companyId?: string; runId?: string; issueId?: string; status: "running" | "succeeded" | "failed"; phase?: "workspace_finalize" | "workspace_prepare" }) =>
      prisma.workspaceOperation.create({
        data: {
          companyId: data.companyId ?? world.companyId,
          runId: data.runId ?? run.runId,
          issueId: data.issueId ?? run.issueId,
          phase: data.phase ?? "workspace_finalize",
          status: data.status,
          metadata: { lookAlike: true },
          finishedAt: data.status === "running" ? null : new Date(),
        },
      });
    // R-FO-2: the prepared workspace is a baseline, never an export receipt (preparedRun wrote one).
    expect(await prisma.workspaceOperation.count({ where: { runId: run.runId, phase: "workspace_prepare", status: "succeeded" } })).toBe(1);
    await finalize({ status: "failed" });
    await finalize({ runId: other.runId, issueId: other.issueId, status: "succeeded" });
    await finalize({ issueId: other.issueId, status: "succeeded" });
    await finalize({ companyId: otherCompany.id, status: "succeeded" });
    const key = { companyId: world.companyId, runId: run.runId, issueId: run.issueId };
    expect(await copybackProven(prisma, key)).toBe(false);
    expect(await copybackProven(prisma, { companyId: world.companyId, runId: other.runId, issueId: other.issueId })).toBe(true);
    const exportsBefore = world.provider.exports;

    expect(await finalizeRun(await liveDeps(world), { runId: run.runId })).toMatchObject({ kind: "owner_unverified", reason: "controller_exited_without_barrier" });
    expect(world.provider.exports).toBe(exportsBefore);
    const held = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(held.status).toBe("running");
    expect(readFinalizationOwner(held.runnerProfileJson)).toEqual({ kind: "receipt", receipt });
    expect(await prisma.issueRecoveryAction.count({ where: { runId: run.runId, cause: OWNER_UNVERIFIED_CAUSE, status: "active" } })).toBe(1);
    expect((await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } })).phase).toBe("workspace_finalizing");

    // Its own barrier, and the same contender takes over and commits without exporting again.
    await writeBarrier(prisma, run.runId);
    expect(await copybackProven(prisma, key)).toBe(true);
    expect(await finalizeRun(await liveDeps(world), { runId: run.runId })).toMatchObject({ kind: "committed", barrier: "reused" });
    expect(world.provider.exports).toBe(exportsBefore);
  });
});
