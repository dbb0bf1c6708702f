// The resolve service (R-RR-5, R-RR-6, R-FO-5) on real state: a legacy repair hold left by a real
// legacy run on a real local sandbox whose copy-back conflicted, and a file-recovery obligation
// opened by core's writer on a cancelled native run. Real PostgreSQL throughout.
import { access } from "node:fs/promises";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isDomainError } from "../../src/errors";
import { openFileRecoveryAction } from "../../src/records/actions";
import { LEGACY_COPYBACK_REPAIR_CAUSE } from "../../src/records/causes";
import { resolveRecoveryAction, type ResolveRecoveryActionBody } from "../../src/recovery/operator/resolve-recovery-action";
import { SYSTEM_ACTOR } from "../../src/records/record-activity";
import { STOPPED_EXECUTION_RECEIPT_KEY, STOPPED_EXECUTION_RECEIPT_SCHEMA } from "../../src/records/stopped-execution-receipt";
import { PLAIN_LOCAL_PLUGIN, submitResult, useFakeFaultWorld } from "../dispatch/dispatch-fixture";
import { discardRetainedSandbox } from "../../src/sandboxes/discard-sandbox";
import { toNoticeAction } from "../../src/recovery/holds";
import { deriveTaskNotice, FILES_GIVEN_UP_MESSAGE } from "../../src/recovery/task-notice";

const world = useFakeFaultWorld();
const exists = (p: string) => access(p).then(() => true, () => false);
const actor = { type: "user" as const, id: null };

/** A real legacy repair hold: a legacy run whose copy-back conflicted with a host edit. */
async function legacyHold() {
  const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, files: { "edit-me.txt": "original\n" }, adapterConfig: { adapter: "legacy", timeoutSeconds: 60 } });
  await world.db.agent.update({
    where: { id: task.agentId },
    data: {
      adapterConfig: { adapter: "legacy", timeoutSeconds: 60, env: { HOST_TARGET: task.hostPath } },
      command: ["/bin/sh", "-c", `printf 'agent\\n' > edit-me.txt && printf 'host\\n' > "$HOST_TARGET/edit-me.txt" && ${submitResult()}`],
    },
  });
  const runId = await world.runOnce(task);
  const action = await world.db.issueRecoveryAction.findFirstOrThrow({ where: { issueId: task.issueId, cause: LEGACY_COPYBACK_REPAIR_CAUSE } });
  const lease = await world.db.environmentLease.findFirstOrThrow({ where: { runId } });
  expect(lease.status).toBe("released");
  return { task, runId, action, lease };
}

/** Everything resolve must leave as it is: the task (owner, generation, status, locks), the run, the lease, the queue. */
async function preserved(issueId: string, runId: string, leaseId: string) {
  const issue = await world.db.issue.findUniqueOrThrow({
    where: { id: issueId },
    select: { status: true, statusVersion: true, assigneeAgentId: true, conversationGeneration: true, executionRunId: true, checkoutRunId: true },
  });
  const run = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true, errorCode: true, runnerProfileJson: true } });
  const lease = await world.db.environmentLease.findUniqueOrThrow({ where: { id: leaseId }, select: { status: true, leasePolicy: true, metadata: true, providerLeaseId: true } });
  const runs = await world.db.heartbeatRun.count({ where: { nativeIssueId: issueId } });
  return { issue, run, lease, runs };
}

function body(h: Awaited<ReturnType<typeof legacyHold>>, extra: Partial<ResolveRecoveryActionBody> = {}): ResolveRecoveryActionBody {
  return {
    actionId: h.action.id,
    outcome: "restored",
    sourceIssueStatus: "blocked",
    executionReconciliation: { runId: h.runId, leaseId: h.lease.id, runStatus: "failed", noExternalActionsPerformed: false },
    workspaceRepairEvidence: { stopEvidence: `lease ${h.lease.id} released with its stop receipt`, recoveredFiles: "edit-me.txt merged by hand" },
    ...extra,
  };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isDomainError(error)) return error.code;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("resolveRecoveryAction", () => {
  it("R-RR-5 R-RR-6 records a file-only repair of a legacy hold: the exact action and lease ids; owner, generation, status, locks, run and allocation unchanged; nothing queued", async () => {
    const h = await legacyHold();
    const before = await preserved(h.task.issueId, h.runId, h.lease.id);
    const result = await resolveRecoveryAction(world.db, { ...body(h), companyId: h.task.companyId, issueId: h.task.issueId, actor: SYSTEM_ACTOR });
    expect(result).toEqual({ actionId: h.action.id, runId: h.runId, leaseIds: [h.lease.id], outcome: "restored", status: "resolved" });
    expect(await preserved(h.task.issueId, h.runId, h.lease.id)).toEqual(before);
    // R-RR-6: the retained allocation is never destroyed by recording the repair.
    expect(await exists(path.join(world.instanceRoot, "sandboxes", h.lease.providerLeaseId ?? "missing"))).toBe(true);
    const action = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: h.action.id } });
    expect(action).toMatchObject({ status: "resolved", outcome: "restored", resolvedByType: "system" });
    expect(action.resolutionEvidence).toMatchObject({ sourceIssueStatus: "blocked", leaseIds: [h.lease.id], verified: { externalActions: "not_certified" }, workspaceRepairEvidence: { recoveredFiles: "edit-me.txt merged by hand" } });
    // A repeat writes nothing and answers the same ids.
    const again = await resolveRecoveryAction(world.db, { ...body(h), companyId: h.task.companyId, issueId: h.task.issueId, actor: SYSTEM_ACTOR });
    expect(again).toMatchObject({ actionId: h.action.id, leaseIds: [h.lease.id], status: "already_resolved" });
    expect(await world.db.activityLog.count({ where: { entityId: h.action.id, action: "recovery.action_resolved" } })).toBe(1);
  });

  it("R-RR-5 refuses a changed source status, another run, a changed run status, a queued or running source and a lease without its stop receipt; nothing is written", async () => {
    const h = await legacyHold();
    const input = (extra: Partial<ResolveRecoveryActionBody>) => ({ ...body(h, extra), companyId: h.task.companyId, issueId: h.task.issueId, actor });
    const rec = body(h).executionReconciliation;
    expect(await refusal(resolveRecoveryAction(world.db, input({ sourceIssueStatus: "in_progress" })))).toBe("source_status_changed");
    expect(await refusal(resolveRecoveryAction(world.db, input({ executionReconciliation: { ...rec, runId: randomUUID() } })))).toBe("run_mismatch");
    expect(await refusal(resolveRecoveryAction(world.db, input({ executionReconciliation: { ...rec, runStatus: "succeeded" } })))).toBe("run_status_changed");
    expect(await refusal(resolveRecoveryAction(world.db, input({ executionReconciliation: { ...rec, noExternalActionsPerformed: true } })))).toBe("external_actions_not_applicable");
    expect(await refusal(resolveRecoveryAction(world.db, { ...input({}), issueId: randomUUID() }))).toBe("not_found");
    // The lease's stop not proven yet (its receipt gone, as while cleanup is still pending).
    await world.db.$executeRaw`UPDATE environment_leases SET status = 'pending_cleanup' WHERE id = ${h.lease.id}::uuid`;
    expect(await refusal(resolveRecoveryAction(world.db, input({})))).toBe("stop_receipt_missing");
    await world.db.$executeRaw`UPDATE environment_leases SET status = 'released' WHERE id = ${h.lease.id}::uuid`;
    for (const status of ["queued", "running"] as const) {
      await world.db.heartbeatRun.update({ where: { id: h.runId }, data: { status } });
      expect(await refusal(resolveRecoveryAction(world.db, input({ executionReconciliation: { ...rec, runStatus: status } })))).toBe("source_run_active");
    }
    await world.db.heartbeatRun.update({ where: { id: h.runId }, data: { status: "failed" } });
    const action = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: h.action.id } });
    expect(action).toMatchObject({ status: "active", outcome: null, resolvedAt: null });
    expect(await world.db.activityLog.count({ where: { entityId: h.action.id } })).toBe(0);
  });

  it("after a Discard gave the hold's files up: the notice and instructions say so, `restored` is refused (no stop receipt on a destroyed lease) and the cancelled disposition closes it", async () => {
    const h = await legacyHold();
    const providerLeaseId = h.lease.providerLeaseId ?? "missing";
    await discardRetainedSandbox(
      { db: world.db, registry: world.registry },
      { companyId: h.task.companyId, leaseId: h.lease.id, providerLeaseId, acknowledgedActionIds: [h.action.id], reason: "edit-me.txt was rewritten by hand", actor },
    );
    const given = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: h.action.id } });
    expect(given.status).toBe("active");
    expect(given.nextAction).toContain(`Sandbox allocation ${providerLeaseId} was discarded`);
    expect(given.nextAction).toContain("edit-me.txt was rewritten by hand");
    expect(deriveTaskNotice([toNoticeAction(given)])).toMatchObject({ kind: "attention", actionId: h.action.id, message: FILES_GIVEN_UP_MESSAGE });
    expect(await exists(path.join(world.instanceRoot, "sandboxes", providerLeaseId))).toBe(false);

    const ctx = { companyId: h.task.companyId, issueId: h.task.issueId, actor: SYSTEM_ACTOR };
    expect(await refusal(resolveRecoveryAction(world.db, { ...body(h), ...ctx }))).toBe("stop_receipt_missing");
    const closed = await resolveRecoveryAction(world.db, { ...body(h, { outcome: "cancelled", workspaceRepairEvidence: undefined, note: "The files were given up when the sandbox was discarded" }), ...ctx });
    expect(closed).toMatchObject({ actionId: h.action.id, outcome: "cancelled" });
    expect(await world.db.issueRecoveryAction.count({ where: { issueId: h.task.issueId, status: { in: ["active", "escalated"] } } })).toBe(0);
  });

  it("R-RR-5 a succeeded legacy run is accepted unchanged", async () => {
    const h = await legacyHold();
    await world.db.heartbeatRun.update({ where: { id: h.runId }, data: { status: "succeeded", errorCode: null } });
    const result = await resolveRecoveryAction(world.db, {
      ...body(h, { executionReconciliation: { runId: h.runId, leaseId: h.lease.id, runStatus: "succeeded", noExternalActionsPerformed: false } }),
      companyId: h.task.companyId,
      issueId: h.task.issueId,
      actor,
    });
    expect(result.status).toBe("resolved");
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: h.runId } })).status).toBe("succeeded");
  });

  it("R-FO-5 recording file evidence for a cancelled native run needs no accepted result, retries nothing, certifies no external action unless confirmed, and keeps owner and status", async () => {
    const task = await world.task({ provider: "fake" });
    const run = await world.db.heartbeatRun.create({ data: { companyId: task.companyId, agentId: task.agentId, nativeIssueId: task.issueId, status: "cancelled", runtimeMode: "native", finishedAt: new Date() } });
    await world.db.issue.update({ where: { id: task.issueId }, data: { status: "in_progress", assigneeAgentId: task.agentId } });
    const lease = await world.db.environmentLease.create({
      data: {
        companyId: task.companyId, environmentId: task.environmentId, executionWorkspaceId: task.workspaceId, runId: run.id, issueId: task.issueId,
        provider: "fake", pluginId: "builtin.fake", providerLeaseId: `fake-${run.id}`, leasePolicy: "ephemeral", status: "released",
        metadata: { sandboxStopAndRetainReceipt: { schema: "copyback.sandbox-stop-and-retain-receipt.v1", method: "builtin.stopLease", requestId: randomUUID(), pluginId: "builtin.fake", providerLeaseId: `fake-${run.id}`, stoppedAt: new Date().toISOString() } },
      },
    });
    const ack = { schema: STOPPED_EXECUTION_RECEIPT_SCHEMA, requestId: randomUUID(), acknowledgedAt: new Date().toISOString(), by: "executor", controller: null, agent: null, leaseId: lease.id };
    await world.db.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = jsonb_build_object(${STOPPED_EXECUTION_RECEIPT_KEY}::text, ${JSON.stringify(ack)}::jsonb) WHERE id = ${run.id}::uuid`;
    const opened = await world.db.$transaction((tx) =>
      openFileRecoveryAction(tx, {
        companyId: task.companyId, issueId: task.issueId, runId: run.id, leaseId: lease.id, providerLeaseId: lease.providerLeaseId, pluginId: "builtin.fake",
        origin: "agent_exited", failureCode: "run_stopped", agentProcess: null, agentStop: null, pin: "already_pinned",
      }),
    );
    const before = await preserved(task.issueId, run.id, lease.id);
    const result = await resolveRecoveryAction(world.db, {
      actionId: opened.actionId,
      outcome: "restored",
      sourceIssueStatus: "in_progress",
      executionReconciliation: { runId: run.id, leaseId: lease.id, runStatus: "cancelled", noExternalActionsPerformed: false },
      workspaceRepairEvidence: { stopEvidence: "stopped receipt", recoveredFiles: "nothing to keep" },
      companyId: task.companyId,
      issueId: task.issueId,
      actor,
    });
    expect(result).toMatchObject({ actionId: opened.actionId, leaseIds: [lease.id], status: "resolved" });
    expect(await preserved(task.issueId, run.id, lease.id)).toEqual(before);
    expect(await world.db.nativeRunResult.count({ where: { runId: run.id } })).toBe(0);
    const action = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: opened.actionId } });
    expect(action.resolutionEvidence).toMatchObject({ verified: { externalActions: "not_certified", stoppedExecutionRequestId: ack.requestId } });
  });
});
