// Takeover of a leftover owner receipt with real processes and a real PostgreSQL (R-OWN-8,
// R-OWN-10, R-OWN-11, R-OWN-12, R-ORP-4, R-OWN-5): a dead controller with a barrier is taken over
// and commits; without a barrier it becomes exactly one board hold; a live one is busy; a reused
// PID is a dead controller; same-boot resume after a failed clear, and no inheritance.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { PrismaClient } from "@copyback/db/client";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { readFinalizationOwner } from "../../src/records/finalization-owner-receipt";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { OWNER_UNVERIFIED_CAUSE } from "../../src/records/causes";
import { preparedRun, writeTree, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, leaveReceipt, liveDeps, markFinalizing, receiptOf, selfIdentity, writeBarrier } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

async function snapshot(runId: string) {
  const prisma = db.prisma();
  return {
    run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } }),
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } }),
    operations: await prisma.workspaceOperation.findMany({ where: { runId }, orderBy: { createdAt: "asc" } }),
    actions: await prisma.issueRecoveryAction.findMany({ where: { runId } }),
  };
}

describe("takeover of a leftover owner receipt", () => {
  it("R-OWN-11: a dead controller on this host whose barrier exists is taken over automatically: commit, no recovery action, no export", async () => {
    const run = await preparedRun(world, "done");
    await markFinalizing(db.prisma(), run.runId);
    await writeBarrier(db.prisma(), run.runId);
    await leaveReceipt(db.prisma(), run.runId, receiptOf(await deadIdentity()));
    const exportsBefore = world.provider.exports;
    const outcome = await finalizeRun(await liveDeps(world), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed", barrier: "reused" });
    expect(world.provider.exports).toBe(exportsBefore);
    const s = await snapshot(run.runId);
    expect(s.coordinator.phase).toBe("committed");
    expect(s.run.status).toBe("succeeded");
    expect(s.actions).toEqual([]);
    expect(readFinalizationOwner(s.run.runnerProfileJson)).toEqual({ kind: "none" });
    // The crashed owner's operation is closed, none is left running (R-ATT-5).
    expect(s.operations.filter((o) => o.status === "running")).toEqual([]);
    const events = await db.prisma().runEvent.findMany({ where: { runId: run.runId, code: "finalization.takeover" } });
    expect(events).toHaveLength(1);
  });

  it("R-OWN-12: a PID that now belongs to another process (other start time) is a dead controller: with a barrier it is taken over", async () => {
    const run = await preparedRun(world, "done");
    await markFinalizing(db.prisma(), run.runId);
    await writeBarrier(db.prisma(), run.runId);
    const self = await selfIdentity();
    // This very PID is alive, but the receipt's start time is another process's.
    await leaveReceipt(db.prisma(), run.runId, receiptOf({ ...self, startTime: String(BigInt(self.startTime) + 1n) }));
    expect(await finalizeRun(await liveDeps(world), { runId: run.runId })).toMatchObject({ kind: "committed", barrier: "reused" });
    expect((await snapshot(run.runId)).actions).toEqual([]);
  });

  it("R-OWN-11, R-ORP-4, R-OWN-5: a dead controller without a barrier (tar children may live on) opens exactly one board hold; repeated checks neither rewrite it nor spend attempts; nothing else is written", async () => {
    const run = await preparedRun(world, "done");
    await markFinalizing(db.prisma(), run.runId);
    const receipt = receiptOf(await deadIdentity());
    await leaveReceipt(db.prisma(), run.runId, receipt);
    const before = await snapshot(run.runId);
    const exportsBefore = world.provider.exports;

    const first = await finalizeRun(await liveDeps(world), { runId: run.runId });
    expect(first).toMatchObject({ kind: "owner_unverified", reason: "controller_exited_without_barrier" });
    const afterFirst = await snapshot(run.runId);
    expect(afterFirst.actions).toHaveLength(1);
    const action = afterFirst.actions[0]!;
    expect(action).toMatchObject({ cause: OWNER_UNVERIFIED_CAUSE, ownerType: "board", status: "active", attemptCount: 0, maxAttempts: null });
    expect(action.wakePolicy).toEqual({ automaticWake: false });
    expect(action.evidence).toMatchObject({ runId: run.runId, ownerToken: receipt.token, reason: "controller_exited_without_barrier", phase: "workspace_finalizing" });
    expect(action.nextAction).toMatch(/attest/i);
    // R-ATT-4: copyback instructions, never a replacement provider run.
    expect(action.nextAction).not.toMatch(/start a new (agent )?run|replacement (provider )?run|rerun/i);

    for (let i = 0; i < 3; i++) expect(await finalizeRun(await liveDeps(world), { runId: run.runId })).toMatchObject({ kind: "owner_unverified", actionId: action.id });
    const after = await snapshot(run.runId);
    expect(after.actions).toEqual([action]);
    expect(world.provider.exports).toBe(exportsBefore);
    expect(after.operations).toEqual(before.operations);
    expect(after.coordinator).toEqual(before.coordinator);
    expect(after.run.status).toBe("running");
    expect(readFinalizationOwner(after.run.runnerProfileJson)).toEqual({ kind: "receipt", receipt });
    // R-ORP-3: the run keeps its source lease.
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } })).status).toBe("active");
  });

  it("R-OWN-11: a malformed receipt requires stop verification", async () => {
    const run = await preparedRun(world);
    await markFinalizing(db.prisma(), run.runId);
    await leaveReceipt(db.prisma(), run.runId, { token: 42 });
    expect(await finalizeRun(await liveDeps(world), { runId: run.runId })).toMatchObject({ kind: "owner_unverified", reason: "receipt_malformed" });
  });

  it("R-OWN-8: a receipt whose controller lives on this host is busy: nothing is written, no hold", async () => {
    const run = await preparedRun(world);
    await markFinalizing(db.prisma(), run.runId);
    const receipt = receiptOf(await selfIdentity());
    await leaveReceipt(db.prisma(), run.runId, receipt);
    const before = await snapshot(run.runId);
    expect(await finalizeRun(await liveDeps(world), { runId: run.runId })).toEqual({ kind: "busy", reason: "owner_alive" });
    const after = await snapshot(run.runId);
    expect(after).toEqual(before);
  });

  it("R-OWN-8, R-OWN-9: pg_terminate_backend of the lock connection while the controller lives: a contender refuses the receipt, publication fails, and nothing reaches the host", async () => {
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "never-published.txt": "x" });
    const deps = await liveDeps(world);
    let contender: unknown = null;
    world.provider.faults.onExport = async () => {
      await db.prisma().$queryRaw`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'copyback-finalization-owner' AND datname = current_database()`;
      // The lock is free now, but the receipt's controller (this process) is alive.
      contender = await finalizeRun(deps, { runId: run.runId });
    };
    try {
      await expect(finalizeRun(deps, { runId: run.runId })).rejects.toMatchObject({ code: "finalization_ownership_lost" });
    } finally {
      world.provider.faults.onExport = undefined;
    }
    expect(contender).toEqual({ kind: "busy", reason: "owner_alive" });
    await expect(readFile(join(world.hostPath, "never-published.txt"), "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    const s = await snapshot(run.runId);
    expect(s.coordinator.phase).toBe("workspace_finalizing");
    expect(s.run.status).toBe("running");
    expect(s.actions).toEqual([]);
  });
});

/** A client whose receipt-clearing statement fails while `failClear` is set (the database "drops" then). */
function failingClear(prisma: PrismaClient, state: { failClear: boolean }): PrismaClient {
  return new Proxy(prisma, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property === "$executeRaw" && typeof value === "function") {
        return (strings: TemplateStringsArray, ...values: unknown[]) => {
          if (state.failClear && strings.join("?").includes("runner_profile_json - ")) return Promise.reject(new Error("connection lost (test)"));
          return (value as (...args: unknown[]) => unknown).call(target, strings, ...values);
        };
      }
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("R-OWN-10: same-boot resume after a failed clear", () => {
  async function retryableRunWithStuckReceipt() {
    const run = await preparedRun(world, "done");
    await writeTree(run.sandbox, { "resumed.txt": "same boot" });
    const state = { failClear: true };
    world.provider.faults.exportFailures = 3;
    const deps = await liveDeps(world, { db: failingClear(db.prisma(), state) });
    const outcome = await finalizeRun(deps, { runId: run.runId });
    world.provider.faults.exportFailures = 0;
    state.failClear = false;
    expect(outcome.kind).toBe("retryable_failure");
    const row = await db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    const receipt = readFinalizationOwner(row.runnerProfileJson);
    expect(receipt.kind).toBe("receipt");
    // The retry is due now.
    await db.prisma().nativeRunFinalization.update({ where: { runId: run.runId }, data: { nextAttemptAt: new Date(Date.now() - 1000) } });
    return { run, deps, receipt: receipt.kind === "receipt" ? receipt.receipt : null };
  }

  it("R-OWN-10: the same controller boot that joined the token resumes after reconnecting, and commits", async () => {
    const { run, deps } = await retryableRunWithStuckReceipt();
    const outcome = await finalizeRun({ ...deps, db: db.prisma() }, { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "committed", barrier: "written" });
    expect(await readFile(join(world.hostPath, "resumed.txt"), "utf8")).toBe("same boot");
    const events = await db.prisma().runEvent.findMany({ where: { runId: run.runId, code: "finalization.takeover" } });
    expect(events.map((e) => e.payload)).toEqual([{ reason: "resume_same_boot" }]);
  });

  it("R-OWN-10: a new boot of the controller does not inherit the joined evidence (the recorded controller lives: busy)", async () => {
    const { run, deps } = await retryableRunWithStuckReceipt();
    const newBoot = { ...(deps.controller as NonNullable<typeof deps.controller>), bootId: "another-boot" };
    expect(await finalizeRun({ ...deps, db: db.prisma(), controller: newBoot }, { runId: run.runId })).toEqual({ kind: "busy", reason: "owner_alive" });
  });

  it("R-OWN-10: an unknown token is not resumed even by the same process (the recorded controller lives: busy)", async () => {
    const { run, deps, receipt } = await retryableRunWithStuckReceipt();
    await leaveReceipt(db.prisma(), run.runId, { ...receipt!, token: "someone-elses-token-000000" });
    expect(await finalizeRun({ ...deps, db: db.prisma() }, { runId: run.runId })).toEqual({ kind: "busy", reason: "owner_alive" });
  });
});
