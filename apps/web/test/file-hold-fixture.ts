// File holds as the recovery core leaves them, for the resolve route, the tRPC mutation, the
// matrix and the console: a task owned by an agent (blocked, a later conversation generation), its
// ended source run, the run's lease stopped and released with its provider receipt, and the
// board-owned hold opened by core's one writer:
//   - "legacy": a failed legacy run; the lease retained by core's retainLeaseOnFailure
//     (retain_on_failure, the retained-source record) and openLegacyCopybackRepairAction (R-RR-2);
//   - "cancelled_native": a native run cancelled by a Stop (its acknowledgement recorded), its
//     file-recovery obligation opened by openFileRecoveryAction (R-FO-1).
import { randomUUID } from "node:crypto";
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import {
  LEASE_METADATA_KEYS,
  STOP_RECEIPT_SCHEMA,
  retainLeaseOnFailure,
} from "@copyback/core/leases";
import {
  openFileRecoveryAction,
  openLegacyCopybackRepairAction,
  STOPPED_EXECUTION_RECEIPT_KEY,
  STOPPED_EXECUTION_RECEIPT_SCHEMA,
} from "@copyback/core/records";

export interface FileHoldPlace {
  companyId: string;
  agentId: string;
  environmentId: string;
  lastActivityAt?: Date;
}

export interface FileHold {
  kind: "legacy" | "cancelled_native";
  issueId: string;
  identifier: string;
  runId: string;
  runStatus: "failed" | "cancelled";
  leaseId: string;
  actionId: string;
  /** The task's status as the hold left it (what a resolution must send back unchanged). */
  issueStatus: "blocked" | "in_progress";
}

let issueNumber = 70_000;

export async function createFileHold(db: PrismaClient, place: FileHoldPlace, kind: FileHold["kind"] = "legacy"): Promise<FileHold> {
  const number = ++issueNumber;
  const issueStatus = kind === "legacy" ? "blocked" : "in_progress";
  const issue = await db.issue.create({
    data: {
      companyId: place.companyId,
      number,
      identifier: `ACME-${number}`,
      title: `Files to recover ${number}`,
      status: issueStatus,
      statusVersion: 2,
      conversationGeneration: 1,
      assigneeAgentId: place.agentId,
      ...(place.lastActivityAt ? { lastActivityAt: place.lastActivityAt } : {}),
    },
  });
  const runStatus = kind === "legacy" ? "failed" : "cancelled";
  const run = await db.heartbeatRun.create({
    data: {
      companyId: place.companyId,
      agentId: place.agentId,
      nativeIssueId: issue.id,
      runtimeMode: kind === "legacy" ? "legacy" : "native",
      status: runStatus,
      errorCode: kind === "legacy" ? "legacy_workspace_copyback_failed" : "run_stopped",
      startedAt: new Date(Date.now() - 60_000),
      finishedAt: new Date(),
    },
  });
  const providerLeaseId = `sbx-${randomUUID()}`;
  const receipt = { schema: STOP_RECEIPT_SCHEMA, method: "builtin.stopLease", requestId: randomUUID(), pluginId: "builtin.fake", providerLeaseId, stoppedAt: new Date().toISOString() };
  const lease = await db.environmentLease.create({
    data: {
      companyId: place.companyId,
      environmentId: place.environmentId,
      runId: run.id,
      issueId: issue.id,
      provider: "fake",
      pluginId: "builtin.fake",
      providerLeaseId,
      leasePolicy: "ephemeral",
      status: "released",
      releasedAt: new Date(),
      metadata: { [LEASE_METADATA_KEYS.stopReceipt]: receipt },
    },
  });
  const actionId = await withTransaction(db, async (tx) => {
    if (kind === "legacy") {
      const retained = await retainLeaseOnFailure(tx, { leaseId: lease.id, expectRunId: run.id, reason: "legacy_copyback_failed" });
      if (retained.kind !== "retained") throw new Error("fixture: the lease was not retained");
      return (
        await openLegacyCopybackRepairAction(tx, {
          companyId: place.companyId,
          issueId: issue.id,
          runId: run.id,
          leaseId: lease.id,
          providerLeaseId,
          pluginId: "builtin.fake",
          path: "copyback_failed",
          failureCode: "workspace_merge_conflict",
          hostWritesStarted: false,
        })
      ).actionId;
    }
    const ack = { schema: STOPPED_EXECUTION_RECEIPT_SCHEMA, requestId: randomUUID(), acknowledgedAt: new Date().toISOString(), by: "executor", controller: null, agent: null, leaseId: lease.id };
    await tx.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object(${STOPPED_EXECUTION_RECEIPT_KEY}::text, ${JSON.stringify(ack)}::jsonb) WHERE id = ${run.id}::uuid`;
    return (
      await openFileRecoveryAction(tx, {
        companyId: place.companyId,
        issueId: issue.id,
        runId: run.id,
        leaseId: lease.id,
        providerLeaseId,
        pluginId: "builtin.fake",
        origin: "agent_exited",
        failureCode: "run_stopped",
        agentProcess: null,
        agentStop: null,
        pin: "already_pinned",
      })
    ).actionId;
  });
  return { kind, issueId: issue.id, identifier: issue.identifier, runId: run.id, runStatus, leaseId: lease.id, actionId, issueStatus };
}

/** A valid restored resolution of the hold. */
export function restoredBody(hold: FileHold, extra: Record<string, unknown> = {}) {
  return {
    actionId: hold.actionId,
    outcome: "restored",
    sourceIssueStatus: hold.issueStatus,
    executionReconciliation: { runId: hold.runId, leaseId: hold.leaseId, runStatus: hold.runStatus },
    workspaceRepairEvidence: { stopEvidence: "The provider console shows the allocation stopped.", recoveredFiles: "src/index.ts copied back by hand." },
    ...extra,
  };
}

/** What a resolution must leave as it is. */
export async function fileHoldState(db: PrismaClient, hold: FileHold) {
  const [issue, run, lease, runs] = await Promise.all([
    db.issue.findUniqueOrThrow({ where: { id: hold.issueId }, select: { status: true, statusVersion: true, assigneeAgentId: true, conversationGeneration: true, executionRunId: true, checkoutRunId: true } }),
    db.heartbeatRun.findUniqueOrThrow({ where: { id: hold.runId }, select: { status: true, runnerProfileJson: true } }),
    db.environmentLease.findUniqueOrThrow({ where: { id: hold.leaseId }, select: { status: true, leasePolicy: true, metadata: true } }),
    db.heartbeatRun.count({ where: { nativeIssueId: hold.issueId } }),
  ]);
  return { issue, run, lease, runs };
}
