// Legacy runs through the whole executor on real local sandboxes (and the fake
// provider where a provider fault is needed): the `legacy` adapter's own copy-back through the
// directory-merge lock with R-RR-1's retries, and the repair hold when the required files cannot
// be copied back (R-RR-2, R-RR-3). Real PostgreSQL, real host workspaces, real agent processes.
import { access } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LEGACY_COPYBACK_FAILED_CODE } from "../../src/dispatch/legacy-copyback";
import { reuseCandidatesSql } from "../../src/leases/acquire-lease";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { readRetainedSource } from "../../src/leases/retained-source";
import { openExportRetryExhaustedAction, openOwnerUnverifiedAction, readLegacyRepairEvidence } from "../../src/records/actions";
import { LEGACY_COPYBACK_REPAIR_CAUSE, LEGACY_COPYBACK_REPAIR_NEXT_ACTION } from "../../src/records/causes";
import { readLegacyLeaseSnapshot } from "../../src/recovery/legacy/lease-snapshot";
import { resolveRecoveryActionBody } from "../../src/recovery/operator/resolve-recovery-action";
import { executeRun } from "../../src/dispatch/execute-run";
import { assignAgent, SYSTEM_ACTOR, wakeAgent } from "../../src/runs/index";
import { PLAIN_LOCAL_PLUGIN, readTree, RESULT_DONE, submitResult, useFakeFaultWorld } from "./dispatch-fixture";

const world = useFakeFaultWorld();
const exists = (p: string) => access(p).then(() => true, () => false);
const LEGACY = { adapter: "legacy", timeoutSeconds: 60 } as const;

/** A legacy agent whose turn edits a file the host also changes meanwhile: its copy-back conflicts (final, never retried). */
async function conflictingLegacyTask() {
  const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, files: { "edit-me.txt": "original\n" }, adapterConfig: { ...LEGACY, env: {} } });
  await world.db.agent.update({
    where: { id: task.agentId },
    data: {
      adapterConfig: { ...LEGACY, env: { HOST_TARGET: task.hostPath } },
      command: ["/bin/sh", "-c", `printf 'agent\\n' > edit-me.txt && echo partial > agent-work.txt && printf 'host\\n' > "$HOST_TARGET/edit-me.txt" && ${submitResult()}`],
    },
  });
  return task;
}

describe("legacy runs", () => {
  it("R-RR-1 a legacy run restores its files through the directory-merge lock, without the native coordinator, and succeeds", async () => {
    const task = await world.task({ files: { "keep.txt": "keep\n", "edit-me.txt": "old\n" }, adapterConfig: LEGACY, script: `printf 'new\\n' > edit-me.txt && echo hi > added.txt && ${submitResult(RESULT_DONE)}` });
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ runtimeMode: "legacy", status: "succeeded" });
    expect(s.coordinator).toBeNull();
    expect(s.issue.status).toBe("done");
    expect(await readTree(task.hostPath)).toEqual({
      "added.txt": { type: "file", content: "hi\n" },
      "edit-me.txt": { type: "file", content: "new\n" },
      "keep.txt": { type: "file", content: "keep\n" },
    });
    expect(s.operations.map((op) => [op.phase, op.status])).toEqual([
      ["workspace_prepare", "succeeded"],
      ["workspace_restore", "succeeded"],
    ]);
    expect(s.codes).toContain("legacy.copyback_restored");
    // R-LG-1: the lease snapshot was recorded before the adapter ran.
    const snapshot = readLegacyLeaseSnapshot(s.run.runnerProfileJson);
    expect(snapshot).toMatchObject({ kind: "present", snapshot: { leaseId: s.leases[0]?.id, realizedRoot: task.hostPath, leasePolicy: "ephemeral" } });
    expect(s.leases[0]?.status).toBe("destroyed");
    expect(await world.db.issueRecoveryAction.count({ where: { issueId: task.issueId } })).toBe(0);
  });

  it("R-RR-1 a legacy copy-back that fails before any host write is retried (two dropped exports) and then restores the files", async () => {
    const task = await world.task({ provider: "fake", files: { "a.txt": "a\n" }, adapterConfig: LEGACY });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_DONE }));
    world.fake.faults.failTimes("exportWorkspace", 2);
    const s = await world.state(await world.runOnce(task));
    expect(s.run.status).toBe("succeeded");
    expect(s.codes.filter((code) => code === "legacy.copyback_retry")).toHaveLength(2);
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" }, "b.txt": { type: "file", content: "b\n" } });
  });

  it("R-RR-2 R-RR-3 a legacy run that cannot copy its required files back: failed run, retain_on_failure lease stopped with a verified receipt, board repair hold; never destroyed or reused", async () => {
    const task = await conflictingLegacyTask();
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ runtimeMode: "legacy", status: "failed", errorCode: LEGACY_COPYBACK_FAILED_CODE });
    expect(s.issue.status).toBe("blocked");
    // A conflict is final: exactly one copy-back try, no retry event.
    expect(s.codes).not.toContain("legacy.copyback_retry");
    const lease = s.leases[0]!;
    expect(lease).toMatchObject({ leasePolicy: "retain_on_failure", status: "released" });
    expect(lease.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { method: "environmentStopLease", providerLeaseId: lease.providerLeaseId } });
    expect(readRetainedSource(lease.metadata)).toMatchObject({ runId, leaseId: lease.id, providerLeaseId: lease.providerLeaseId, originalPolicy: "ephemeral", reason: "legacy_copyback_failed" });
    // The sandbox with the agent's files is kept.
    expect(await exists(path.join(world.instanceRoot, "sandboxes", lease.providerLeaseId ?? "missing"))).toBe(true);
    const actions = await world.db.issueRecoveryAction.findMany({ where: { issueId: task.issueId } });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ cause: LEGACY_COPYBACK_REPAIR_CAUSE, ownerType: "board", status: "active", runId, leaseId: lease.id, nextAction: LEGACY_COPYBACK_REPAIR_NEXT_ACTION });
    expect(readLegacyRepairEvidence(actions[0]?.evidence)).toMatchObject({ path: "copyback_failed", leaseIds: [lease.id], providerLeaseId: lease.providerLeaseId });
    // R-RR-6: the ordinary reuse never selects the retained source.
    const candidates = await world.db.$queryRaw<{ id: string }[]>(reuseCandidatesSql({ companyId: task.companyId, environmentId: task.environmentId, executionWorkspaceId: task.workspaceId }));
    expect(candidates.map((c) => c.id)).not.toContain(lease.id);
  });

  it("R-RR-3 a failed stop of the retained source stays pending_cleanup under the cleanup backoff; the retry stops it and verifies the receipt, never destroys", async () => {
    const task = await world.task({ provider: "fake", files: { "a.txt": "a\n" }, adapterConfig: LEGACY });
    world.scriptFake(() => ({ files: { "b.txt": "b\n" }, resultFile: RESULT_DONE }));
    world.fake.faults.failTimes("exportWorkspace", 3).failTimes("stopLease", 1);
    const runId = await world.runOnce(task);
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: LEGACY_COPYBACK_FAILED_CODE });
    const lease = s.leases[0]!;
    expect(lease).toMatchObject({ status: "pending_cleanup", leasePolicy: "retain_on_failure", cleanupAttempts: 1 });
    expect(lease.nextCleanupAt?.getTime()).toBeGreaterThan(Date.now());
    expect(lease.metadata).toMatchObject({ sandboxStopAndRetain: { leaseId: lease.id } });
    // The reconciler's lease cleanup sweep honours the backoff, then retries the verified stop.
    const sweep = leaseCleanupSweep({ db: world.db, registry: world.registry });
    expect(await sweep.handle({ leaseId: lease.id, companyId: task.companyId })).toBe("not_due");
    await world.db.environmentLease.update({ where: { id: lease.id }, data: { nextCleanupAt: new Date(Date.now() - 1000) } });
    await sweep.handle({ leaseId: lease.id, companyId: task.companyId });
    const after = await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after).toMatchObject({ status: "released", leasePolicy: "retain_on_failure" });
    expect(world.fake.calls.filter((call) => call.op === "destroy" && call.leaseId === lease.id)).toHaveLength(0);
    expect(await readTree(task.hostPath)).toEqual({ "a.txt": { type: "file", content: "a\n" } });
  });

  it("R-RR-2 the repair hold survives reassignment and a conversation reset and coexists with newer incidents without superseding them", async () => {
    const task = await conflictingLegacyTask();
    const runId = await world.runOnce(task);
    const hold = await world.db.issueRecoveryAction.findFirstOrThrow({ where: { issueId: task.issueId, cause: LEGACY_COPYBACK_REPAIR_CAUSE } });
    // Reassignment to another agent and a new conversation generation.
    const other = await world.db.agent.create({ data: { companyId: task.companyId, name: `other-${runId}`, command: ["/bin/true"], environmentId: task.environmentId } });
    await assignAgent(world.db, { companyId: task.companyId, issueId: task.issueId, agentId: other.id, actor: SYSTEM_ACTOR });
    await world.db.issue.update({ where: { id: task.issueId }, data: { conversationGeneration: { increment: 1 } } });
    // Newer incidents on the same task (another run's holds).
    // Its owner receipt is malformed (a hold for one names the receipt it holds).
    const newer = await world.db.heartbeatRun.create({
      data: { companyId: task.companyId, agentId: other.id, nativeIssueId: task.issueId, status: "failed", runnerProfileJson: { nativeWorkspaceFinalizationOwner: { token: 42 } } },
    });
    const owner = await world.db.$transaction((tx) =>
      openOwnerUnverifiedAction(tx, { companyId: task.companyId, issueId: task.issueId, runId: newer.id, receipt: null, reason: "receipt_malformed", phase: "workspace_finalizing", resultId: null, leaseIds: [] }),
    );
    const exported = await world.db.$transaction((tx) =>
      openExportRetryExhaustedAction(tx, { companyId: task.companyId, issueId: task.issueId, runId: newer.id, resultId: null, leaseId: null, providerLeaseId: null, pluginId: null, attempts: 3, lastFailureCode: "transfer_dropped" }),
    );
    const open = await world.db.issueRecoveryAction.findMany({ where: { issueId: task.issueId }, orderBy: { createdAt: "asc" } });
    expect(open.map((a) => [a.id, a.status])).toEqual([
      [hold.id, "active"],
      [owner.actionId, "active"],
      [exported.actionId, "active"],
    ]);
    // R-RR-7 (the wake's own refusal): the hold keeps the task from being woken past it.
    await expect(wakeAgent(world.db, { companyId: task.companyId, issueId: task.issueId, actor: SYSTEM_ACTOR })).rejects.toMatchObject({ code: "recovery_hold_open" });
    expect((await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.id } })).status).toBe("active");
  });

  it("R-LG-3 a later successful run never certifies the earlier files: the hold stays open with its retained source and a repair still needs evidence", async () => {
    const task = await conflictingLegacyTask();
    const failedRunId = await world.runOnce(task);
    const hold = await world.db.issueRecoveryAction.findFirstOrThrow({ where: { issueId: task.issueId, cause: LEGACY_COPYBACK_REPAIR_CAUSE } });
    const retainedLease = await world.db.environmentLease.findFirstOrThrow({ where: { runId: failedRunId } });
    // A later turn that succeeds (queued directly: a wake is refused while the hold is open).
    await world.db.agent.update({ where: { id: task.agentId }, data: { command: ["/bin/sh", "-c", `echo later > later.txt && ${submitResult(RESULT_DONE)}`] } });
    const later = await world.db.heartbeatRun.create({ data: { companyId: task.companyId, agentId: task.agentId, nativeIssueId: task.issueId, runtimeMode: "legacy", status: "queued" } });
    const claimed = (await world.claim(1)).find((run) => run.runId === later.id);
    expect(claimed).toBeDefined();
    await executeRun(world.deps(), claimed!, new AbortController().signal);
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: later.id } })).status).toBe("succeeded");
    expect((await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: hold.id } })).status).toBe("active");
    const lease = await world.db.environmentLease.findUniqueOrThrow({ where: { id: retainedLease.id } });
    expect(readRetainedSource(lease.metadata)).toMatchObject({ runId: failedRunId });
    expect(lease.leasePolicy).toBe("retain_on_failure");
    // The retained-source record alone is no evidence: a restored repair without evidence is not a request.
    const withoutEvidence = resolveRecoveryActionBody.safeParse({
      actionId: hold.id,
      outcome: "restored",
      sourceIssueStatus: "done",
      executionReconciliation: { runId: failedRunId, leaseId: retainedLease.id, runStatus: "failed" },
    });
    expect(withoutEvidence.success).toBe(false);
  });
});
