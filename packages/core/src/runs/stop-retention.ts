// R-RC-7's retention step inside the caller's transaction: the exact source lease of a stopped
// run is read under its row lock, decideStopRetention says what to do, an active lease is pinned
// with a stop-only intent (leases/stop-intent.ts: never a release or destroy), and the run's
// stopRetention record says what happened. The caller holds the run's and the task's row locks.
import type { TransactionClient } from "@copyback/db/client";
import { confirmedStopReceipt, readStopIntent } from "../leases/lease-metadata";
import { pinLeaseForRecovery } from "../leases/stop-intent";
import { decideStopRetention, type StopRetentionLease } from "../recovery/policies/decide-stop-retention";
import { STOP_RETENTION_SCHEMA, type StopRetentionRecord } from "./run-stop-records";

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
    return { ...base, outcome: decision.outcome, reason: decision.reason, leaseId: decision.leaseId, stopIntentRequestId: null };
  }
  const pinned = await pinLeaseForRecovery(tx, decision.leaseId);
  if (pinned.kind === "pinned") {
    return { ...base, outcome: "pinned", reason: "stop_only_intent_recorded", leaseId: decision.leaseId, stopIntentRequestId: pinned.intent.requestId };
  }
  // The row is locked: an active lease with an allocation always pins. Anything else is a bug.
  return { ...base, outcome: "refused", reason: `pin_${pinned.kind}`, leaseId: decision.leaseId, stopIntentRequestId: null };
}
