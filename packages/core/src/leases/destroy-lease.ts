// Destroying a lease's sandbox after the commit (ephemeral and retain_on_failure leases of
// committed runs; release-policy.ts decides when).
//
// The intent comes first, as for stop-and-retain (R-SO-1): the lease moves to `pending_cleanup`
// with a `sandboxDestroy` intent and the cleanup claim BEFORE the provider hears of the destroy,
// so a crash or a lost reply leaves a lease the cleanup sweep finds, never an `active` or a
// `failed` one whose sandbox may still exist. Destroy is idempotent, so it is repeated in-process
// with a short backoff (provider-retry-policy.ts) before it is left to the sweep; only the
// provider's answer moves the lease to `destroyed`.
import { setTimeout as sleep } from "node:timers/promises";
import { Prisma, type PrismaClient } from "@copyback/db/client";
import { invalid } from "../errors";
import type { EnvironmentProvider } from "../providers/types";
import { failureOf } from "./lease-failure";
import { claimOf, handleOf, pendingOutcome, type LeaseCleanupOptions } from "./lease-cleanup";
import { DESTROY_INTENT_SCHEMA, LEASE_METADATA_KEYS, readDestroyIntent, sandboxIdentitySchema, type DestroyIntent } from "./lease-metadata";
import type { LeaseProviderRegistry, LeaseReleaseOutcome, LeaseRow, PendingCleanupCode } from "./lease-types";
import { hasCapability } from "../providers/registry";
import { pluginForLease } from "./plugin-for-lease";
import { decideDestroyRetry } from "./provider-retry-policy";
import { leaseHeldSql } from "./lease-holds";
import { claimPendingCleanup, deferCleanup, patchLease, recordCleanupAttempt, transitionLease } from "./transition-lease";

export type DestroyLeaseOptions = LeaseCleanupOptions;

/** Reports what happened to a lease whose compare-and-set this call lost (release-lease.ts). */
export type AfterLostRace = (leaseId: string) => Promise<LeaseReleaseOutcome>;

/**
 * Destroys the sandbox of an `active` lease, or continues the recorded destroy of a
 * `pending_cleanup` lease that carries a destroy intent (a repeated release after a crash or an
 * unconfirmed destroy, or the cleanup sweep).
 */
export async function destroyLeaseSandbox(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  lease: LeaseRow,
  afterLostRace: AfterLostRace,
  options: DestroyLeaseOptions = {},
): Promise<LeaseReleaseOutcome> {
  const claim = claimOf(lease, options);
  const secured = await secureDestroyIntent(db, lease, afterLostRace, options);
  if (secured.kind === "outcome") return secured.outcome;
  let { intent, intentJson } = secured;
  // Gives the claim back without spending an attempt: nothing was asked of the provider (R-EX-6).
  const deferred = async (code: PendingCleanupCode, message: string) => {
    await deferCleanup(db, { leaseId: lease.id, by: claim.by, metadataPatch: { [LEASE_METADATA_KEYS.failure]: { code, message, at: new Date().toISOString() } } });
    return pendingOutcome(lease.id, code, message);
  };

  // R-EX-6: exactly the pinned plugin; no other plugin of the same provider destroys its sandbox.
  const lookup = pluginForLease(registry, lease);
  if (lookup.kind !== "found") return deferred(lookup.code, lookup.message);
  const plugin = lookup.plugin;
  if (!hasCapability(plugin, "destroy")) return deferred("provider_capability_missing", `Plugin ${plugin.pluginId} cannot destroy sandboxes.`);
  if (!intent.providerLeaseId) {
    if (!options.resolveUnnamedAllocation || intent.reason !== "acquire_unconfirmed") {
      return deferred("lease_not_allocated", "The provider never named the allocation; the cleanup sweep resolves it by the lease id.");
    }
    const named = await nameAllocation(db, plugin, lease, intent, intentJson);
    if (named.kind !== "named") return named.kind === "deferred" ? deferred(named.code, named.message) : named.outcome;
    ({ intent, intentJson } = named);
  }
  const providerLeaseId = intent.providerLeaseId;
  if (!providerLeaseId) return deferred("lease_not_allocated", "The provider never named the allocation.");

  const handle = handleOf(lease, providerLeaseId);
  const wait = options.sleep ?? sleep;
  let failedAttempts = 0;
  for (;;) {
    try {
      await plugin.destroy(handle);
      break;
    } catch (error) {
      failedAttempts += 1;
      const next = decideDestroyRetry(failedAttempts);
      if (next.kind === "give_up") {
        // Uncertain: the sandbox may or may not be gone. It stays pending_cleanup with its
        // intent (never failed), the attempt is counted and the claim given back for the sweep.
        const failure = failureOf(error, "provider_destroy_failed");
        await recordCleanupAttempt(db, lease.id, { failure });
        return pendingOutcome(lease.id, "destroy_failed", failure.message);
      }
      await wait(next.delayMs);
    }
  }

  const won = await transitionLease(db, {
    leaseId: lease.id,
    from: ["pending_cleanup"],
    to: "destroyed",
    expectMetadata: { key: LEASE_METADATA_KEYS.destroyIntent, value: intentJson },
    metadataPatch: { [LEASE_METADATA_KEYS.destroyIntent]: null, [LEASE_METADATA_KEYS.failure]: null },
    set: { cleanupClaim: null },
  });
  if (!won) return afterLostRace(lease.id);
  return { kind: "destroyed", leaseId: lease.id };
}

type Named =
  | { kind: "named"; intent: DestroyIntent; intentJson: unknown }
  | { kind: "deferred"; code: PendingCleanupCode; message: string }
  | { kind: "outcome"; outcome: LeaseReleaseOutcome };

/**
 * A lost acquire reply left a destroy intent without the allocation's name. Acquire is idempotent
 * per lease id (a provider returns the sandbox it made for this lease, or makes an empty one), so
 * asking again with the lease's own id, company, environment and run names what to destroy. The
 * name is recorded on the row and in the intent (compare-and-set on the intent) before the
 * destroy. A failed acquire counts a cleanup attempt; the intent stays.
 */
async function nameAllocation(db: PrismaClient, plugin: EnvironmentProvider, lease: LeaseRow, intent: DestroyIntent, intentJson: unknown): Promise<Named> {
  if (!hasCapability(plugin, "acquire")) return { kind: "deferred", code: "provider_capability_missing", message: `Plugin ${plugin.pluginId} cannot acquire, so the allocation cannot be named.` };
  const environment = await db.environment.findUnique({ where: { id: lease.environmentId }, select: { config: true } });
  let identity: { providerLeaseId: string; fingerprint: string };
  try {
    const allocation = await plugin.acquire({ companyId: lease.companyId, environmentId: lease.environmentId, leaseId: lease.id, runId: intent.runId, config: environment?.config ?? {} });
    const parsed = sandboxIdentitySchema.safeParse(allocation.identity);
    if (!parsed.success) throw invalid("provider_allocation_invalid", "The provider returned no usable identity.");
    identity = parsed.data;
  } catch (error) {
    const failure = failureOf(error, "provider_acquire_failed");
    await recordCleanupAttempt(db, lease.id, { failure });
    return { kind: "outcome", outcome: pendingOutcome(lease.id, "destroy_failed", failure.message) };
  }
  const named: DestroyIntent = { ...intent, providerLeaseId: identity.providerLeaseId };
  const recorded = await patchLease(db, {
    leaseId: lease.id,
    status: "pending_cleanup",
    expectMetadata: { key: LEASE_METADATA_KEYS.destroyIntent, value: intentJson },
    set: { providerLeaseId: identity.providerLeaseId },
    metadataPatch: { [LEASE_METADATA_KEYS.destroyIntent]: named, [LEASE_METADATA_KEYS.identity]: identity },
  });
  if (!recorded) return { kind: "outcome", outcome: pendingOutcome(lease.id, "cleanup_claimed", "The lease's destroy intent changed while its allocation was named.") };
  return { kind: "named", intent: named, intentJson: named };
}

/**
 * Makes the destroy intent durable (status pending_cleanup) and takes the cleanup claim before the
 * provider hears of the destroy. An active lease gets a new intent; a pending one is continued
 * with its recorded intent if it still names this lease row and nobody else holds its claim.
 */
async function secureDestroyIntent(
  db: PrismaClient,
  lease: LeaseRow,
  afterLostRace: AfterLostRace,
  options: DestroyLeaseOptions,
): Promise<{ kind: "secured"; intent: DestroyIntent; intentJson: unknown } | { kind: "outcome"; outcome: LeaseReleaseOutcome }> {
  const claim = claimOf(lease, options);
  if (lease.status === "active") {
    const intent = newDestroyIntent(lease, { providerLeaseId: lease.providerLeaseId, reason: "release" });
    const won = await transitionLease(db, {
      leaseId: lease.id,
      from: ["active"],
      to: "pending_cleanup",
      metadataPatch: { [LEASE_METADATA_KEYS.destroyIntent]: intent, [LEASE_METADATA_KEYS.failure]: null },
      set: { cleanupClaim: claim },
    });
    if (!won) return { kind: "outcome", outcome: await afterLostRace(lease.id) };
    return { kind: "secured", intent, intentJson: intent };
  }
  const read = readDestroyIntent(lease.metadata, lease);
  if (read.kind !== "present") {
    const message = read.kind === "invalid" ? read.message : "The pending lease has no destroy intent.";
    await deferCleanup(db, { leaseId: lease.id, by: claim.by, metadataPatch: { [LEASE_METADATA_KEYS.failure]: { code: "destroy_intent_invalid", message, at: new Date().toISOString() } } });
    return { kind: "outcome", outcome: pendingOutcome(lease.id, "destroy_intent_invalid", message) };
  }
  const intentJson = (lease.metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.destroyIntent];
  const claimed = await claimPendingCleanup(db, { leaseId: lease.id, ...claim, intentJson, intentKey: LEASE_METADATA_KEYS.destroyIntent, dueOnly: options.takeover === true });
  if (!claimed) {
    return { kind: "outcome", outcome: pendingOutcome(lease.id, "cleanup_claimed", "Another cleanup of this lease is in progress.") };
  }
  return { kind: "secured", intent: read.value, intentJson };
}

/** The destroy intent of a lease (lease-metadata.ts destroyIntentSchema). */
export function newDestroyIntent(
  lease: Pick<LeaseRow, "id" | "companyId" | "runId" | "pluginId">,
  what: { providerLeaseId: string | null; reason: DestroyIntent["reason"] },
): DestroyIntent {
  return {
    schema: DESTROY_INTENT_SCHEMA,
    companyId: lease.companyId,
    runId: lease.runId ?? "",
    leaseId: lease.id,
    pluginId: lease.pluginId, // R-EX-6: the cleanup goes to exactly this plugin
    providerLeaseId: what.providerLeaseId,
    reason: what.reason,
    createdAt: new Date().toISOString(),
  };
}

/**
 * R-EX-2: the one way from `released` to a destroy, for a sandbox stopped and kept while
 * its run's copyback waited for a retry, once that copyback committed (release-lease.ts checks the
 * commit and the barrier), and for a warm reusable sandbox of an environment whose lease policy no
 * longer reuses (retire-warm-sandboxes.ts; `db` may be that change's transaction). Intent first, as every destroy (R-SO-1): status pending_cleanup with the
 * destroy intent, the old receipt and its size gone, in one compare-and-set on the status, on that
 * exact receipt (no reuse or export retry took the lease meanwhile) and on the held-lease rule (no
 * open recovery action still needs its files). Not an edge of the ordinary status machine
 * (lease-status.ts), like the export-only retry's own (stop-intent.ts recordExportRetryIntent).
 * Returns whether this caller won.
 */
export async function recordDestroyAfterCommitIntent(db: Pick<PrismaClient, "$executeRaw">, input: { leaseId: string; receiptJson: unknown; intent: DestroyIntent }): Promise<boolean> {
  if (input.receiptJson === undefined || input.receiptJson === null) return false;
  const changed = await db.$executeRaw(Prisma.sql`
    UPDATE environment_leases
    SET status = 'pending_cleanup'::lease_status,
        metadata = (metadata - ${[LEASE_METADATA_KEYS.stopReceipt, LEASE_METADATA_KEYS.sandboxSize, LEASE_METADATA_KEYS.failure]}::text[])
                   || jsonb_build_object(${LEASE_METADATA_KEYS.destroyIntent}::text, ${JSON.stringify(input.intent)}::jsonb),
        cleanup_claimed_by = NULL, cleanup_claimed_until = NULL, updated_at = now()
    WHERE id = ${input.leaseId}::uuid AND status = 'released'::lease_status
      AND jsonb_typeof(metadata) = 'object'
      AND metadata -> ${LEASE_METADATA_KEYS.stopReceipt} = ${JSON.stringify(input.receiptJson)}::jsonb
      AND NOT ${leaseHeldSql("environment_leases")}`);
  return changed === 1;
}
