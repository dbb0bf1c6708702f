// Releasing a run's lease by its policy when the run ends (release-policy.ts
// decides destroy or stop-and-retain).
//
// Stop-and-retain (R-SO-1): the v2 intent and status `pending_cleanup` are written FIRST, then the
// pinned plugin is asked to stop (environmentStopLease). Only a confirmed receipt for this
// request, plugin and allocation releases the lease (R-SO-2). A missing plugin or capability, a
// failed stop or an unconfirmed receipt leaves it `pending_cleanup` for the restart sweep; release
// and destroy are never fallbacks (R-EX-6, R-SO-3). On a provider with an auto-delete policy the
// stop waits for a read-back record that says auto-delete is disabled (R-DT-1). Destroy (destroy-lease.ts) records its own
// intent first the same way and leaves an unconfirmed destroy `pending_cleanup`, never `failed`.
import type { PrismaClient } from "@copyback/db";
import { z } from "zod";
import { conflict, notFound } from "../errors";
import type { StopReceipt } from "../providers/types";
import { failureOf, parseLeaseInput } from "./lease-failure";
import {
  confirmedStopReceipt,
  LEASE_METADATA_KEYS,
  readDestroyIntent,
  readLeaseFailure,
  readStopIntent,
  STOP_RECEIPT_SCHEMA,
  stopMethodFor,
  stopReceiptSchema,
  type StopIntent,
  type StopReceiptRecord,
} from "./lease-metadata";
import type { LeaseProviderRegistry, LeaseReleaseOutcome, LeaseRow, PendingCleanupCode, ReleaseLeaseInput } from "./lease-types";

export { CLEANUP_CLAIM_MS };
import { destroyLeaseSandbox, newDestroyIntent, recordDestroyAfterCommitIntent } from "./destroy-lease";
import { CLEANUP_CLAIM_MS, claimOf, handleOf, pendingOutcome, type CleanupClaim, type LeaseCleanupOptions } from "./lease-cleanup";
import { hasCapability } from "../providers/registry";
import { pluginForLease } from "./plugin-for-lease";
import { preserveFromAutoDelete } from "./auto-delete-preservation";
import { newStopIntent } from "./stop-intent";
import { recordRetainedSandboxSize } from "./sandbox-size";
import { decideLeaseRelease } from "./release-policy";
import { claimPendingCleanup, deferCleanup, patchLease, recordCleanupAttempt, transitionLease, type LeaseMetadataPatch } from "./transition-lease";
import { copybackProven } from "../records/copyback-proven";

const releaseInput = z.object({
  leaseId: z.uuid(),
  runId: z.uuid(),
  outcome: z.enum(["committed", "failed", "agent_not_started"]),
});

export async function releaseLeaseByPolicy(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  rawInput: ReleaseLeaseInput,
): Promise<LeaseReleaseOutcome> {
  const input = parseLeaseInput(releaseInput, rawInput);

  const lease = await db.environmentLease.findUnique({ where: { id: input.leaseId } });
  if (!lease) throw notFound("Lease");
  if (lease.runId !== input.runId) {
    throw conflict("lease_run_mismatch", "The lease is bound to another run.", { leaseId: lease.id, runId: lease.runId });
  }
  if (lease.status === "active") {
    return decideLeaseRelease(lease.leasePolicy, input.outcome).kind === "destroy"
      ? destroyLeaseSandbox(db, registry, lease, lostRaceOf(db, registry))
      : stopAndRetain(db, registry, lease, {});
  }
  // A sandbox kept through a retry (a stop-only intent of an export-only retry, or the stop of a
  // transient retry: released) follows its destroy-after-commit policy once the commit is proven.
  if ((lease.status === "pending_cleanup" || lease.status === "released") && input.outcome === "committed" && decideLeaseRelease(lease.leasePolicy, "committed").kind === "destroy") {
    const converted = await destroyAfterRetriedCommit(db, lease);
    if (converted) return destroyLeaseSandbox(db, registry, converted, lostRaceOf(db, registry));
  }
  // A repeated call (after a crash or a lost reply) continues or reports what already happened.
  return settledOutcome(db, registry, lease, {});
}

/**
 * R-EX-2: an ephemeral sandbox kept by a stop-only intent through an export-only retry, or stopped
 * and released while a transient failure waited for its retry (without this, nothing selected it after
 * the commit and it was never destroyed), follows its original destroy-after-turn policy only once
 * the exact result committed: the run's coordinator is committed and its workspace holds the
 * finalized host-copy receipt (the succeeded workspace_finalize operation, copyback-proven.ts).
 * Then the stop intent (or the stop receipt of a released lease) is replaced by a destroy intent in
 * one compare-and-set (the document read here, no live claim of anyone else; a released lease also
 * only while it holds nothing for recovery) and the ordinary destroy follows. Anything short of
 * that keeps the sandbox (null).
 */
async function destroyAfterRetriedCommit(db: PrismaClient, lease: LeaseRow): Promise<LeaseRow | null> {
  if (!lease.runId || !lease.providerLeaseId) return null;
  const kept = lease.status === "released" ? LEASE_METADATA_KEYS.stopReceipt : LEASE_METADATA_KEYS.stopIntent;
  if (lease.status === "released" ? confirmedStopReceipt(lease.metadata, lease).kind !== "confirmed" : readStopIntent(lease.metadata, lease).kind !== "present") return null;
  const run = await db.heartbeatRun.findUnique({ where: { id: lease.runId }, select: { companyId: true, nativeIssueId: true, finalization: { select: { phase: true } } } });
  if (!run || run.finalization?.phase !== "committed") return null;
  if (!(await copybackProven(db, { companyId: run.companyId, runId: lease.runId, issueId: run.nativeIssueId }))) return null;
  const destroy = newDestroyIntent(lease, { providerLeaseId: lease.providerLeaseId, reason: "release" });
  const keptJson = (lease.metadata as Record<string, unknown>)[kept];
  const won =
    lease.status === "released"
      ? await recordDestroyAfterCommitIntent(db, { leaseId: lease.id, receiptJson: keptJson, intent: destroy })
      : await patchLease(db, {
          leaseId: lease.id,
          status: "pending_cleanup",
          expectMetadata: { key: LEASE_METADATA_KEYS.stopIntent, value: keptJson },
          metadataPatch: { [LEASE_METADATA_KEYS.stopIntent]: null, [LEASE_METADATA_KEYS.destroyIntent]: destroy },
          set: { cleanupClaim: null },
        });
  return won ? db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } }) : null;
}

/**
 * Continues the recorded cleanup of a `pending_cleanup` lease: its stop-and-retain intent if it
 * has one (a recorded stop wins over a destroy: it keeps files), otherwise its destroy intent.
 * The one implementation behind a repeated release and the cleanup sweep
 * (recovery/sweeps/lease-cleanup-sweep.ts), which passes its own claim and `takeover`.
 */
export function continueLeaseCleanup(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  lease: LeaseRow,
  options: LeaseCleanupOptions = {},
): Promise<LeaseReleaseOutcome> {
  if (lease.status !== "pending_cleanup") return settledOutcome(db, registry, lease, options);
  return readStopIntent(lease.metadata, lease).kind === "absent" && readDestroyIntent(lease.metadata, lease).kind !== "absent"
    ? destroyLeaseSandbox(db, registry, lease, lostRaceOf(db, registry), options)
    : stopAndRetain(db, registry, lease, options);
}

async function settledOutcome(db: PrismaClient, registry: LeaseProviderRegistry, lease: LeaseRow, options: LeaseCleanupOptions): Promise<LeaseReleaseOutcome> {
  switch (lease.status) {
    case "pending_cleanup":
      return continueLeaseCleanup(db, registry, lease, options);
    case "destroyed":
      return { kind: "destroyed", leaseId: lease.id };
    case "failed": {
      const failure = readLeaseFailure(lease.metadata);
      return failure.kind === "present"
        ? { kind: "failed", leaseId: lease.id, code: failure.value.code, message: failure.value.message }
        : { kind: "failed", leaseId: lease.id, code: "lease_failed", message: "The lease failed." };
    }
    case "released": {
      const receipt = confirmedStopReceipt(lease.metadata, lease);
      if (receipt.kind === "confirmed") return { kind: "stopped_and_retained", leaseId: lease.id, receipt: receipt.receipt };
      throw conflict("lease_not_releasable", "The lease is released without a confirmed stop receipt.", { leaseId: lease.id });
    }
    case "active":
      throw conflict("lease_changed", "The lease changed while it was being released.", { leaseId: lease.id });
  }
}

const lostRaceOf = (db: PrismaClient, registry: LeaseProviderRegistry) => (leaseId: string) => afterLostRace(db, registry, leaseId);

/** Re-reads a lease whose compare-and-set this call lost and reports the winner's result. */
async function afterLostRace(db: PrismaClient, registry: LeaseProviderRegistry, leaseId: string): Promise<LeaseReleaseOutcome> {
  const lease = await db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } });
  if (lease.status === "pending_cleanup") {
    // Another caller owns the stop in flight; report it pending rather than stopping twice.
    return pendingOutcome(leaseId, "cleanup_claimed", "Another cleanup of this lease is in progress.");
  }
  return settledOutcome(db, registry, lease, {});
}

/**
 * Stops the lease's exact allocation and keeps its files (R-SO-1): an active lease gets a new v2
 * intent first, a pending one continues its recorded intent. `intentMetadata` is written in the
 * same compare-and-set as a new intent (acquire-lease.ts marks a lease whose resume failed).
 * Every outcome short of a confirmed receipt leaves the lease `pending_cleanup` with its claim
 * given back and its next attempt scheduled (a counted attempt, or a deferral that spends none).
 */
export async function stopAndRetain(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  lease: LeaseRow,
  options: LeaseCleanupOptions & { intentMetadata?: LeaseMetadataPatch },
): Promise<LeaseReleaseOutcome> {
  const secured = await secureStopIntent(db, registry, lease, options);
  if (secured.kind === "outcome") return secured.outcome;
  return requestStop(db, registry, lease, secured.intent, secured.intentJson, claimOf(lease, options));
}

/**
 * R-SO-1: makes the stop intent durable (status pending_cleanup) and takes the cleanup claim
 * before the provider hears of the stop. An active lease gets a new v2 intent; a pending one is
 * retried with its recorded intent (same request id, so a late receipt still matches) if the
 * intent still names this lease row, its run and its allocation (R-EX-5) and nobody else holds
 * the claim.
 */
async function secureStopIntent(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  lease: LeaseRow,
  options: LeaseCleanupOptions & { intentMetadata?: LeaseMetadataPatch },
): Promise<{ kind: "secured"; intent: StopIntent; intentJson: unknown } | { kind: "outcome"; outcome: LeaseReleaseOutcome }> {
  const pending = (code: PendingCleanupCode, message: string) => ({ kind: "outcome" as const, outcome: pendingOutcome(lease.id, code, message) });
  const claim = claimOf(lease, options);
  if (lease.status === "active") {
    if (!lease.providerLeaseId) {
      // An acquisition that never recorded its allocation: there is no exact sandbox to stop, and
      // nothing was ever seeded into one (no handle was given out). A sandbox the provider may
      // have made is destroyed by the sweep, found by the lease id (acquire is idempotent).
      const failure = { code: "lease_not_allocated", message: "The lease has no provider allocation to stop.", at: new Date().toISOString() };
      const intent = newDestroyIntent(lease, { providerLeaseId: null, reason: "acquire_unconfirmed" });
      const won = await transitionLease(db, {
        leaseId: lease.id,
        from: ["active"],
        to: "pending_cleanup",
        metadataPatch: { [LEASE_METADATA_KEYS.destroyIntent]: intent, [LEASE_METADATA_KEYS.failure]: failure },
      });
      if (!won) return { kind: "outcome", outcome: await afterLostRace(db, registry, lease.id) };
      return pending("lease_not_allocated", failure.message);
    }
    const intent = newStopIntent(lease, lease.providerLeaseId);
    const won = await transitionLease(db, {
      leaseId: lease.id,
      from: ["active"],
      to: "pending_cleanup",
      metadataPatch: { ...options.intentMetadata, [LEASE_METADATA_KEYS.stopIntent]: intent, [LEASE_METADATA_KEYS.stopReceipt]: null },
      set: { cleanupClaim: claim },
    });
    if (!won) return { kind: "outcome", outcome: await afterLostRace(db, registry, lease.id) };
    return { kind: "secured", intent, intentJson: intent };
  }
  const read = readStopIntent(lease.metadata, lease);
  if (read.kind !== "present") {
    // Nothing is asked of the provider; the look is put off without spending an attempt.
    const message = read.kind === "invalid" ? read.message : "The pending lease has no stop intent.";
    await deferCleanup(db, { leaseId: lease.id, by: claim.by, metadataPatch: { [LEASE_METADATA_KEYS.failure]: note("stop_intent_invalid", message) } });
    return pending("stop_intent_invalid", message);
  }
  const intentJson = (lease.metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.stopIntent];
  if (!(await claimPendingCleanup(db, { leaseId: lease.id, ...claim, intentJson, dueOnly: options.takeover === true }))) {
    return pending("cleanup_claimed", "Another stop of this lease is in progress.");
  }
  return { kind: "secured", intent: read.value, intentJson };
}

/**
 * Asks the pinned plugin to stop and applies the receipt; anything short of a matching confirmed
 * receipt stays pending, with the claim this call holds given back.
 */
async function requestStop(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  lease: LeaseRow,
  intent: StopIntent,
  intentJson: unknown,
  claim: CleanupClaim,
): Promise<LeaseReleaseOutcome> {
  const defer = async (code: PendingCleanupCode, message: string) => {
    await deferCleanup(db, { leaseId: lease.id, by: claim.by, metadataPatch: { [LEASE_METADATA_KEYS.failure]: note(code, message) } });
    return pendingOutcome(lease.id, code, message);
  };
  // R-EX-6: exactly the pinned plugin; unavailable defers without spending a cleanup attempt.
  const lookup = pluginForLease(registry, lease);
  if (lookup.kind !== "found") return defer(lookup.code, lookup.message);
  const plugin = lookup.plugin;
  if (!hasCapability(plugin, "environmentStopLease")) {
    // R-EX-6 / R-SO-3: without environmentStopLease the lease gets neither release nor destroy.
    return defer("provider_capability_missing", `Plugin ${plugin.pluginId} does not advertise environmentStopLease.`);
  }
  // R-DT-1: a provider that deletes stopped sandboxes on its own gets auto-delete disabled and its
  // record read back first; unconfirmed stays pending (an attempt), never a stop or a destroy.
  if (plugin.capabilities.has("autoDeletePolicy")) {
    if (!hasCapability(plugin, "autoDeletePolicy")) {
      return defer("provider_capability_missing", `Plugin ${plugin.pluginId} advertises autoDeletePolicy without disableAutoDelete and readAutoDeletePolicy.`);
    }
    const preserved = await preserveFromAutoDelete(plugin, handleOf(lease, intent.providerLeaseId));
    if (preserved.kind !== "confirmed") {
      await recordCleanupAttempt(db, lease.id, { failure: note(preserved.code, preserved.message) });
      return pendingOutcome(lease.id, preserved.code, preserved.message);
    }
  }

  let receipt: StopReceipt;
  try {
    receipt = await plugin.stopLease(handleOf(lease, intent.providerLeaseId), { requestId: intent.requestId });
  } catch (error) {
    const failure = failureOf(error, "stop_failed");
    await recordCleanupAttempt(db, lease.id, { failure });
    return pendingOutcome(lease.id, "stop_failed", failure.message);
  }

  const verdict = judgeStopReceipt(receipt, intent);
  if (verdict.kind !== "confirmed") {
    await recordCleanupAttempt(db, lease.id, { failure: note(verdict.code, verdict.message) });
    return pendingOutcome(lease.id, verdict.code, verdict.message);
  }
  // R-SO-2: the matching receipt clears the intent and leaves the lease released and resumable.
  const won = await transitionLease(db, {
    leaseId: lease.id,
    from: ["pending_cleanup"],
    to: "released",
    expectMetadata: { key: LEASE_METADATA_KEYS.stopIntent, value: intentJson },
    metadataPatch: {
      [LEASE_METADATA_KEYS.stopReceipt]: verdict.receipt,
      [LEASE_METADATA_KEYS.stopIntent]: null,
      [LEASE_METADATA_KEYS.failure]: null,
    },
    set: { cleanupClaim: null },
  });
  if (!won) return afterLostRace(db, registry, lease.id);
  // Only once the stop is recorded: how much the kept sandbox holds, for the Retained sandboxes
  // list (sandbox-size.ts; bounded, and a failure records nothing and changes nothing here).
  await recordRetainedSandboxSize(db, plugin, lease, verdict.receipt);
  return { kind: "stopped_and_retained", leaseId: lease.id, receipt: verdict.receipt };
}

function note(code: string, message: string) {
  return { code, message, at: new Date().toISOString() };
}

export type StopReceiptVerdict =
  | { kind: "confirmed"; receipt: StopReceiptRecord }
  | { kind: "rejected"; code: "stop_unconfirmed" | "stop_receipt_mismatch"; message: string };

/** Pure: whether a provider's stop receipt proves the stop this intent asked for. */
export function judgeStopReceipt(receipt: StopReceipt, intent: StopIntent): StopReceiptVerdict {
  if (receipt.confirmed !== true) {
    return { kind: "rejected", code: "stop_unconfirmed", message: "The provider could not confirm the stop." };
  }
  if (receipt.requestId !== intent.requestId) {
    return { kind: "rejected", code: "stop_receipt_mismatch", message: "The receipt answers another stop request." };
  }
  if (receipt.pluginId !== intent.pluginId || receipt.providerLeaseId !== intent.providerLeaseId) {
    return { kind: "rejected", code: "stop_receipt_mismatch", message: "The receipt names another plugin or allocation." };
  }
  // R-SO-2 / R-SO-3: only the built-in fake provider's receipts say builtin.stopLease.
  if (receipt.method !== stopMethodFor(intent.pluginId)) {
    return { kind: "rejected", code: "stop_receipt_mismatch", message: `Plugin ${intent.pluginId} cannot stop by ${receipt.method}; its receipts must say ${stopMethodFor(intent.pluginId)}.` };
  }
  const record = stopReceiptSchema.safeParse({
    schema: STOP_RECEIPT_SCHEMA,
    method: receipt.method,
    requestId: receipt.requestId,
    pluginId: receipt.pluginId,
    providerLeaseId: receipt.providerLeaseId,
    stoppedAt: receipt.stoppedAt,
  });
  if (!record.success) {
    return { kind: "rejected", code: "stop_receipt_mismatch", message: `The receipt is malformed: ${z.prettifyError(record.error)}` };
  }
  return { kind: "confirmed", receipt: record.data };
}


