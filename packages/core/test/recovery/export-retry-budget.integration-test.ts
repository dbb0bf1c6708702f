// The export retry budget on a real PostgreSQL (R-EX-1, R-EX-4): transient export failures get
// three coordinator attempts; the third one's failure settles the run as
// native_workspace_sync_out_retry_exhausted and, in that same transaction, pins the exact sandbox
// with a stop-only intent and opens the board's export-only-retry hold. The accepted result stays.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { readStopIntent } from "../../src/leases/lease-metadata";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../src/records/causes";
import { attestOwnerStop } from "../../src/recovery/operator/attest-owner-stop";
import { wakeAgent } from "../../src/runs/wake-agent";
import { preparedRun, type World, useWorld } from "../finalization/finalization-fixture";
import { deadIdentity, leaveReceipt, liveDeps, markFinalizing, receiptOf } from "./recovery-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

describe("the export retry budget", () => {
  it("R-EX-1, R-EX-4: three failing coordinator attempts, then the exhausted hold; the stop-only intent, the hold and the failed run are written in one transaction", async () => {
    const run = await preparedRun(world, "done");
    world.provider.faults.exportFailures = 1_000;
    let now = new Date();
    const deps = () => ({ ...world.deps(), now: () => now });
    try {
      const first = await finalizeRun(deps(), { runId: run.runId });
      expect(first).toMatchObject({ kind: "retryable_failure" });
      now = new Date((first as { nextAttemptAt: Date }).nextAttemptAt.getTime() + 1);
      const second = await finalizeRun(deps(), { runId: run.runId });
      expect(second).toMatchObject({ kind: "retryable_failure" });
      // Nothing is pinned or held while the budget lasts.
      expect(await db.prisma().issueRecoveryAction.count({ where: { runId: run.runId } })).toBe(0);
      expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } })).status).toBe("active");
      now = new Date((second as { nextAttemptAt: Date }).nextAttemptAt.getTime() + 1);
      const third = await finalizeRun(deps(), { runId: run.runId });
      expect(third).toEqual({ kind: "terminal_failure", operationId: expect.any(String), code: "native_workspace_sync_out_retry_exhausted" });
    } finally {
      world.provider.faults.exportFailures = 0;
    }

    // The state right after that transaction, before any release: what a crash here would leave.
    const prisma = db.prisma();
    const coordinator = await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } });
    expect(coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "native_workspace_sync_out_retry_exhausted", attempt: 3, resultId: run.resultId });
    expect(coordinator.failureDetail).toMatchObject({ attempts: 3, lastFailureCode: expect.stringMatching(/^provider_/) });
    expect(JSON.stringify(coordinator.failureDetail)).not.toMatch(/disk|space|ENOSPC/i);
    const r = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: run.runId } });
    expect(r).toMatchObject({ status: "failed", errorCode: "native_workspace_sync_out_retry_exhausted" });
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: run.issueId } })).status).toBe("blocked");
    expect(await prisma.nativeRunResult.count({ where: { runId: run.runId, schemaStatus: "accepted" } })).toBe(1);
    const lease = await prisma.environmentLease.findUniqueOrThrow({ where: { id: run.handle.leaseId } });
    expect(lease.status).toBe("pending_cleanup");
    const intent = readStopIntent(lease.metadata, lease);
    expect(intent).toMatchObject({ kind: "present", value: { leaseId: lease.id, runId: run.runId, providerLeaseId: run.handle.providerLeaseId, pluginId: lease.pluginId } });
    const actions = await prisma.issueRecoveryAction.findMany({ where: { runId: run.runId } });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ cause: EXPORT_RETRY_EXHAUSTED_CAUSE, ownerType: "board", status: "active", leaseId: lease.id });
    expect(actions[0]?.nextAction).toMatch(/export-only retry/);
    expect(actions[0]?.nextAction).not.toMatch(/start a new (agent )?run|disk/i);
    const ops = await prisma.workspaceOperation.findMany({ where: { runId: run.runId, phase: "workspace_finalize" } });
    expect(ops.map((o) => o.status)).toEqual(["failed", "failed", "failed"]);

    // The release after it (or the cleanup sweep after a crash) continues that exact intent:
    // never a release for reuse or a destroy (this plugin cannot stop: it stays pending).
    const released = await releaseLeaseByPolicy(prisma, { forLease: () => world.provider }, { leaseId: lease.id, runId: run.runId, outcome: "failed" });
    expect(released.kind).toBe("pending_cleanup");
    const after = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.status).toBe("pending_cleanup");
    expect(readStopIntent(after.metadata, after)).toMatchObject({ kind: "present", value: { requestId: (intent as { value: { requestId: string } }).value.requestId } });

    // The hold keeps the task's saved work: a wake is refused.
    await expect(wakeAgent(prisma, { companyId: world.companyId, issueId: run.issueId, actor: { type: "system", id: null } })).rejects.toMatchObject({ code: "recovery_hold_open" });
  });

  it("R-EX-1: an interrupted attempt spends no retry: after a killed owner's attempt is attested, the second transient export failure is still retryable and the third exhausts the budget", async () => {
    const prisma = db.prisma();
    const run = await preparedRun(world, "done");
    // Attempt 1: the owner took its receipt, started the export and was killed (no failure recorded).
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
      const first = await finalizeRun(await deps(), { runId: run.runId });
      expect(first).toMatchObject({ kind: "retryable_failure" });
      now = new Date((first as { nextAttemptAt: Date }).nextAttemptAt.getTime() + 1);
      // The boundary, one before: the second transient failure (the coordinator's third attempt).
      const second = await finalizeRun(await deps(), { runId: run.runId });
      expect(second).toMatchObject({ kind: "retryable_failure" });
      expect(await prisma.issueRecoveryAction.count({ where: { runId: run.runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE } })).toBe(0);
      now = new Date((second as { nextAttemptAt: Date }).nextAttemptAt.getTime() + 1);
      // The boundary: the third transient failure exhausts the budget.
      const third = await finalizeRun(await deps(), { runId: run.runId });
      expect(third).toMatchObject({ kind: "terminal_failure", code: "native_workspace_sync_out_retry_exhausted" });
    } finally {
      world.provider.faults.exportFailures = 0;
    }
    const coordinator = await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } });
    expect(coordinator).toMatchObject({ phase: "terminal_failure", attempt: 4, failureDetail: { attempts: 3 } });
    const hold = await prisma.issueRecoveryAction.findFirstOrThrow({ where: { runId: run.runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE } });
    expect(hold.evidence).toMatchObject({ attempts: 3 });
  });
});
