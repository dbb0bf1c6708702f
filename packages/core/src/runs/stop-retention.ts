// R-RC-7's retention step inside the caller's transaction: the exact source lease of a stopped
// run is read under its row lock, decideStopRetention says what to do, an active lease is pinned
// with a stop-only intent (leases/stop-intent.ts: never a release or destroy), a retained source
// gets its board-owned file-recovery obligation, and the run's stopRetention record says what
// happened. The caller holds the run's and the task's row locks.
import type { TransactionClient } from "@copyback/db/client";
import { confirmedStopReceipt, readStopIntent } from "../leases/lease-metadata";
import { pinLeaseForRecovery } from "../leases/stop-intent";
import { decideStopRetention, type StopRetentionLease } from "./decide-stop-retention";
import { readAgentProcess } from "../records/agent-process";
import { openFileRecoveryAction } from "../records/actions";
import { RUN_STOPPED_CODE, STOP_RETENTION_SCHEMA, type StopRetentionRecord } from "../records/run-stop-records";

/** The run's own lease (the one named, else the newest the run acquired), under its row lock. */
export async function loadStopRetentionLease(tx: TransactionClient, runId: string, leaseId: string | null): Promise<StopRetentionLease | null> {
  const ids = leaseId
    ? [leaseId]
    : (await tx.environmentLease.findMany({ where: { runId }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 1, select: { id: true } })).map((l) => l.id);
  const id = ids[0];
  if (!id) return null;
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM environment_leases WHERE id = ${id}::uuid FOR UPDATE`;
  if (locked.length !== 1) return null;
  const row = await tx.environmentLease.findUniqueOrThrow({ where: { id } });
  const competing = row.providerLeaseId
    ? await tx.environmentLease.count({
        where: { id: { not: row.id }, pluginId: row.pluginId, providerLeaseId: row.providerLeaseId, status: { in: ["active", "pending_cleanup", "released"] } },
      })
    : 0;
  return {
    id: row.id,
    runId: row.runId,
    status: row.status,
    leasePolicy: row.leasePolicy,
    providerLeaseId: row.providerLeaseId,
    hasStopIntent: readStopIntent(row.metadata, row).kind === "present",
    hasConfirmedStopReceipt: row.status === "released" && confirmedStopReceipt(row.metadata, { pluginId: row.pluginId, providerLeaseId: row.providerLeaseId }).kind === "confirmed",
    competingOwner: competing > 0,
  };
}

/** Decides and applies the retention of the run's source; returns the record to store on the run. */
export async function retainStoppedSource(
  tx: TransactionClient,
  input: { runId: string; requestId: string; leaseId: string | null; by: "executor" | "sweep" },
): Promise<StopRetentionRecord> {
  const lease = await loadStopRetentionLease(tx, input.runId, input.leaseId);
  const decision = decideStopRetention(input.runId, lease);
  const base = { schema: STOP_RETENTION_SCHEMA, requestId: input.requestId, by: input.by, recordedAt: new Date().toISOString() } as const;
  if (decision.kind === "record") {
    const actionId = decision.outcome === "retained" && decision.leaseId ? await openObligation(tx, input, decision.leaseId, "already_pinned") : null;
    return { ...base, outcome: decision.outcome, reason: decision.reason, leaseId: decision.leaseId, stopIntentRequestId: null, actionId };
  }
  const pinned = await pinLeaseForRecovery(tx, decision.leaseId);
  if (pinned.kind === "pinned") {
    const actionId = await openObligation(tx, input, decision.leaseId, "pinned");
    return { ...base, outcome: "pinned", reason: "stop_only_intent_recorded", leaseId: decision.leaseId, stopIntentRequestId: pinned.intent.requestId, actionId };
  }
  // The row is locked: an active lease with an allocation always pins. Anything else is a bug.
  return { ...base, outcome: "refused", reason: `pin_${pinned.kind}`, leaseId: decision.leaseId, stopIntentRequestId: null, actionId: null };
}

/**
 * A native run's kept sandbox holds the stopped agent's unpublished edits: the board-owned file-recovery
 * obligation names the run and its exact allocation (the same one R-FO-1 opens; for a cancelled
 * native run its form offers the optional "no external actions were performed" confirmation).
 * Idempotent by run, in the retaining transaction.
 */
async function openObligation(tx: TransactionClient, input: { runId: string }, leaseId: string, pin: "pinned" | "already_pinned"): Promise<string | null> {
  const run = await tx.heartbeatRun.findUniqueOrThrow({ where: { id: input.runId }, select: { companyId: true, nativeIssueId: true, runnerProfileJson: true, runtimeMode: true } });
  // A legacy adapter still copies back after its Stop (R-LG-1): its own late report decides
  // whether the allocation needs the repair hold, so no obligation is opened for it here.
  if (run.runtimeMode !== "native") return null;
  const lease = await tx.environmentLease.findUniqueOrThrow({ where: { id: leaseId }, select: { providerLeaseId: true, pluginId: true } });
  const agent = readAgentProcess(run.runnerProfileJson);
  const opened = await openFileRecoveryAction(tx, {
    companyId: run.companyId,
    issueId: run.nativeIssueId,
    runId: input.runId,
    leaseId,
    providerLeaseId: lease.providerLeaseId,
    pluginId: lease.pluginId,
    origin: "agent_exited",
    failureCode: RUN_STOPPED_CODE,
    agentProcess: agent,
    // The Stop's acknowledgement says the executor stopped the agent's group before cancelling.
    agentStop: agent ? "stopped" : "not_recorded",
    pin,
  });
  return opened.actionId;
}
