// The legacy repair hold's transactions on real local sandboxes: the failed run, the lease's
// retention intent and the board hold in ONE transaction (R-RR-2, a crash injected between the
// steps leaves none), and the late copy-back report after a Stop already stopped and released an
// originally ephemeral lease (R-LG-1..3), with its matrix: each mismatching field fails closed.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { acquireLease } from "../../src/leases/acquire-lease";
import { releaseLeaseByPolicy } from "../../src/leases/release-lease";
import { readRetainedSource } from "../../src/leases/retained-source";
import { LEGACY_COPYBACK_REPAIR_CAUSE } from "../../src/records/causes";
import { LEGACY_LEASE_SNAPSHOT_KEY, recordLegacyLeaseSnapshot } from "../../src/recovery/legacy/lease-snapshot";
import { recordLegacyCopybackFailure } from "../../src/recovery/legacy/record-copyback-failure";
import { recordLateLegacyCopybackFailure } from "../../src/recovery/legacy/record-late-copyback-failure";
import { STOPPED_EXECUTION_RECEIPT_KEY, STOPPED_EXECUTION_RECEIPT_SCHEMA } from "../../src/records/stopped-execution-receipt";
import { prepareRunWorkspace } from "../../src/workspace/prepare-run-workspace";
import { useFakeFaultWorld, type Task } from "../dispatch/dispatch-fixture";

const world = useFakeFaultWorld();
const LEGACY = { adapter: "legacy", timeoutSeconds: 60 } as const;

/** A claimed legacy run with an active lease on a real local sandbox and its workspace prepared. */
async function runningLegacyRun(options: { policy?: "ephemeral" | "reuse_by_environment" } = {}) {
  const task = await world.task({ files: { "a.txt": "a\n" }, adapterConfig: LEGACY, policy: options.policy ?? "ephemeral" });
  const runId = await world.wake(task);
  const claimed = await world.claim(1);
  expect(claimed.map((c) => c.runId)).toEqual([runId]);
  const acquired = await acquireLease(world.db, world.registry, { companyId: task.companyId, runId, issueId: task.issueId, environmentId: task.environmentId, executionWorkspaceId: task.workspaceId });
  const plugin = world.registry.forLease(acquired.lease);
  const prepared = await prepareRunWorkspace(world.deps(), { runId, lease: acquired.handle, plugin });
  await recordLegacyLeaseSnapshot(world.db, { runId, leaseId: acquired.lease.id, realizedRoot: prepared.descriptor.hostPath });
  return { task, runId, leaseId: acquired.lease.id };
}

/** What a Stop leaves: the run cancelled with its acknowledgement (the stopped-execution receipt), the lease stopped and released. */
async function stopRun(runId: string, leaseId: string) {
  const ack = { schema: STOPPED_EXECUTION_RECEIPT_SCHEMA, requestId: randomUUID(), acknowledgedAt: new Date().toISOString(), by: "executor", controller: null, agent: null, leaseId };
  await world.db.$executeRaw`
    UPDATE heartbeat_runs SET status = 'cancelled', finished_at = now(), error_code = 'run_stopped',
      runner_profile_json = runner_profile_json || jsonb_build_object(${STOPPED_EXECUTION_RECEIPT_KEY}::text, ${JSON.stringify(ack)}::jsonb)
    WHERE id = ${runId}::uuid`;
  const released = await releaseLeaseByPolicy(world.db, world.registry, { leaseId, runId, outcome: "failed" });
  expect(released.kind).toBe("stopped_and_retained");
}

async function nothingHeld(task: Task, leaseId: string, policy = "ephemeral") {
  expect(await world.db.issueRecoveryAction.count({ where: { issueId: task.issueId } })).toBe(0);
  const lease = await world.db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } });
  expect(lease.leasePolicy).toBe(policy);
  expect(readRetainedSource(lease.metadata)).toBeNull();
  return lease;
}

describe("R-RR-2 one transaction", () => {
  it("R-RR-2 a crash injected between the failed run and the retention intent leaves neither, nor a hold", async () => {
    const { task, runId, leaseId } = await runningLegacyRun();
    const crash = new Error("injected crash");
    await expect(recordLegacyCopybackFailure(world.db, { runId, leaseId, code: "legacy_workspace_copyback_failed", message: "failed", hostWritesStarted: false }, { afterRunFailed: () => { throw crash; } })).rejects.toBe(crash);
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");
    expect((await world.db.issue.findUniqueOrThrow({ where: { id: task.issueId } })).status).toBe("in_progress");
    expect((await nothingHeld(task, leaseId)).status).toBe("active");
  });

  it("R-RR-2 a crash injected between the retention intent and the hold leaves none of the three", async () => {
    const { task, runId, leaseId } = await runningLegacyRun();
    await expect(recordLegacyCopybackFailure(world.db, { runId, leaseId, code: "legacy_workspace_copyback_failed", message: "failed", hostWritesStarted: false }, { afterRetention: () => { throw new Error("crash"); } })).rejects.toThrow("crash");
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");
    const lease = await nothingHeld(task, leaseId);
    expect(lease.status).toBe("active");
    expect(lease.metadata).not.toHaveProperty("sandboxStopAndRetain");
    // Without the crash the same call writes all three together.
    const held = await recordLegacyCopybackFailure(world.db, { runId, leaseId, code: "legacy_workspace_copyback_failed", message: "failed", hostWritesStarted: false });
    expect(held).toMatchObject({ kind: "held", leaseId, retain: "retained" });
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("failed");
    const pinned = await world.db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } });
    expect(pinned).toMatchObject({ status: "pending_cleanup", leasePolicy: "retain_on_failure" });
    expect(await world.db.issueRecoveryAction.count({ where: { issueId: task.issueId, cause: LEGACY_COPYBACK_REPAIR_CAUSE, status: "active" } })).toBe(1);
  });
});

describe("R-LG-1 late copy-back failure after a Stop", () => {
  let source: Awaited<ReturnType<typeof runningLegacyRun>>;
  let snapshot: Record<string, unknown>;
  beforeAll(async () => {
    source = await runningLegacyRun();
    await stopRun(source.runId, source.leaseId);
    const run = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: source.runId } });
    snapshot = (run.runnerProfileJson as Record<string, Record<string, unknown>>)[LEGACY_LEASE_SNAPSHOT_KEY]!;
  });
  const setSnapshot = (value: unknown) =>
    world.db.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object(${LEGACY_LEASE_SNAPSHOT_KEY}::text, ${JSON.stringify(value)}::jsonb) WHERE id = ${source.runId}::uuid`;
  const report = () => recordLateLegacyCopybackFailure(world.db, { companyId: source.task.companyId, runId: source.runId, code: "workspace_copyback_transfer_dropped", message: "late" });

  const later = (iso: unknown) => new Date(new Date(String(iso)).getTime() + 1).toISOString();
  const matrix: [string, (s: Record<string, unknown>) => Record<string, unknown>, string][] = [
    ["company", (s) => ({ ...s, companyId: randomUUID() }), "snapshot_other_run"],
    ["run", (s) => ({ ...s, runId: randomUUID() }), "snapshot_other_run"],
    ["issue", (s) => ({ ...s, issueId: randomUUID() }), "lease_changed"],
    ["workspace", (s) => ({ ...s, executionWorkspaceId: randomUUID() }), "lease_changed"],
    ["provider", (s) => ({ ...s, provider: "fake" }), "lease_changed"],
    ["allocation", (s) => ({ ...s, providerLeaseId: "another-allocation" }), "lease_changed"],
    ["acquisitionTime", (s) => ({ ...s, acquiredAt: later(s.acquiredAt) }), "lease_changed"],
    ["plugin", (s) => ({ ...s, pluginId: "another.plugin" }), "lease_changed"],
    ["realizedRoot", (s) => ({ ...s, realizedRoot: "/srv/elsewhere" }), "lease_changed"],
  ];
  it.each(matrix)("R-LG-1 a mismatching %s fails closed: nothing retained, no hold, run and task unchanged", async (field, mutate, code) => {
    const issueBefore = await world.db.issue.findUniqueOrThrow({ where: { id: source.task.issueId } });
    await setSnapshot(mutate(snapshot));
    try {
      const outcome = await report();
      expect(outcome).toMatchObject({ kind: "rejected", code, field });
    } finally {
      await setSnapshot(snapshot);
    }
    const lease = await nothingHeld(source.task, source.leaseId);
    expect(lease.status).toBe("released");
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: source.runId } })).status).toBe("cancelled");
    const issueAfter = await world.db.issue.findUniqueOrThrow({ where: { id: source.task.issueId } });
    expect({ status: issueAfter.status, statusVersion: issueAfter.statusVersion }).toEqual({ status: issueBefore.status, statusVersion: issueBefore.statusVersion });
  });

  it("R-LG-2 a reusable lease never enters this path", async () => {
    await setSnapshot({ ...snapshot, leasePolicy: "reuse_by_environment" });
    try {
      expect(await report()).toMatchObject({ kind: "rejected", code: "reusable_lease" });
    } finally {
      await setSnapshot(snapshot);
    }
    await nothingHeld(source.task, source.leaseId);
  });

  it("R-LG-1 without the stopped-execution receipt the report fails closed", async () => {
    await world.db.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json - ${STOPPED_EXECUTION_RECEIPT_KEY}::text WHERE id = ${source.runId}::uuid`;
    try {
      expect(await report()).toMatchObject({ kind: "rejected", code: "execution_receipt_missing" });
    } finally {
      const ack = { schema: STOPPED_EXECUTION_RECEIPT_SCHEMA, requestId: randomUUID(), acknowledgedAt: new Date().toISOString(), leaseId: source.leaseId };
      await world.db.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object(${STOPPED_EXECUTION_RECEIPT_KEY}::text, ${JSON.stringify(ack)}::jsonb) WHERE id = ${source.runId}::uuid`;
    }
    await nothingHeld(source.task, source.leaseId);
  });

  it("R-LG-1 R-LG-3 a full match keeps the released allocation for repair: excluded from reuse, receipts intact, run and task unchanged, a board hold", async () => {
    const before = await world.db.environmentLease.findUniqueOrThrow({ where: { id: source.leaseId } });
    const issueBefore = await world.db.issue.findUniqueOrThrow({ where: { id: source.task.issueId } });
    const outcome = await report();
    expect(outcome).toMatchObject({ kind: "held", leaseId: source.leaseId });
    const lease = await world.db.environmentLease.findUniqueOrThrow({ where: { id: source.leaseId } });
    expect(lease).toMatchObject({ status: "released", leasePolicy: "retain_on_failure" });
    expect((lease.metadata as Record<string, unknown>).sandboxStopAndRetainReceipt).toEqual((before.metadata as Record<string, unknown>).sandboxStopAndRetainReceipt);
    expect(readRetainedSource(lease.metadata)).toMatchObject({ reason: "legacy_late_copyback_failure", originalPolicy: "ephemeral", providerLeaseId: before.providerLeaseId });
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: source.runId } })).status).toBe("cancelled");
    const issueAfter = await world.db.issue.findUniqueOrThrow({ where: { id: source.task.issueId } });
    expect(issueAfter.statusVersion).toBe(issueBefore.statusVersion);
    const actions = await world.db.issueRecoveryAction.findMany({ where: { issueId: source.task.issueId } });
    expect(actions).toMatchObject([{ cause: LEGACY_COPYBACK_REPAIR_CAUSE, ownerType: "board", status: "active", runId: source.runId, leaseId: source.leaseId }]);
    // A repeated report records nothing more.
    expect(await report()).toEqual({ kind: "already_recorded" });
    expect(await world.db.issueRecoveryAction.count({ where: { issueId: source.task.issueId } })).toBe(1);
  });
});

describe("R-LG-2 a missing snapshot", () => {
  it("R-LG-2 a run without its pre-dispatch snapshot never adopts another released lease", async () => {
    const other = await runningLegacyRun();
    await stopRun(other.runId, other.leaseId);
    const victim = await runningLegacyRun();
    await stopRun(victim.runId, victim.leaseId);
    await world.db.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json - ${LEGACY_LEASE_SNAPSHOT_KEY}::text WHERE id = ${victim.runId}::uuid`;
    expect(await recordLateLegacyCopybackFailure(world.db, { companyId: victim.task.companyId, runId: victim.runId, code: "x", message: "late" })).toMatchObject({ kind: "rejected", code: "snapshot_missing" });
    await world.db.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object(${LEGACY_LEASE_SNAPSHOT_KEY}::text, '{"schema":"bogus"}'::jsonb) WHERE id = ${victim.runId}::uuid`;
    expect(await recordLateLegacyCopybackFailure(world.db, { companyId: victim.task.companyId, runId: victim.runId, code: "x", message: "late" })).toMatchObject({ kind: "rejected", code: "snapshot_invalid" });
    await nothingHeld(victim.task, victim.leaseId);
    await nothingHeld(other.task, other.leaseId);
  });
});
