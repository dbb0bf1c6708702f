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
import type { PrismaClient } from "@copyback/db";
import { failureOf } from "./lease-failure";
import { handleOf, pendingOutcome, releaseClaimOf } from "./lease-cleanup";
import { DESTROY_INTENT_SCHEMA, LEASE_METADATA_KEYS, readDestroyIntent, type DestroyIntent } from "./lease-metadata";
import type { LeaseProviderRegistry, LeaseReleaseOutcome, LeaseRow } from "./lease-types";
import { hasCapability } from "../providers/registry";
import { pluginForLease } from "./plugin-for-lease";
import { decideDestroyRetry } from "./provider-retry-policy";
import { claimPendingCleanup, patchLease, recordCleanupAttempt, transitionLease } from "./transition-lease";

export interface DestroyLeaseOptions {
  /** The backoff's sleep (tests pass one that returns at once). */
  sleep?: (ms: number) => Promise<unknown>;
}

/** Reports what happened to a lease whose compare-and-set this call lost (release-lease.ts). */
export type AfterLostRace = (leaseId: string) => Promise<LeaseReleaseOutcome>;

/**
 * Destroys the sandbox of an `active` lease, or continues the recorded destroy of a
 * `pending_cleanup` lease that carries a destroy intent (a repeated release after a crash or an
 * unconfirmed destroy).
 */
export async function destroyLeaseSandbox(
  db: PrismaClient,
  registry: LeaseProviderRegistry,
  lease: LeaseRow,
  afterLostRace: AfterLostRace,
  options: DestroyLeaseOptions = {},
): Promise<LeaseReleaseOutcome> {
  const secured = await secureDestroyIntent(db, lease, afterLostRace);
  if (secured.kind === "outcome") return secured.outcome;
  const { intent, intentJson } = secured;
  // Gives the claim back without spending an attempt: nothing was asked of the provider (R-EX-6).
  const deferred = async (code: Parameters<typeof pendingOutcome>[1], message: string) => {
    await patchLease(db, { leaseId: lease.id, status: "pending_cleanup", set: { cleanupClaim: null } });
    return pendingOutcome(lease.id, code, message);
  };

  // R-EX-6: exactly the pinned plugin; no other plugin of the same provider destroys its sandbox.
  const lookup = pluginForLease(registry, lease);
  if (lookup.kind !== "found") return deferred(lookup.code, lookup.message);
  const plugin = lookup.plugin;
  if (!hasCapability(plugin, "destroy")) return deferred("provider_capability_missing", `Plugin ${plugin.pluginId} cannot destroy sandboxes.`);
  if (!intent.providerLeaseId) {
    return deferred("lease_not_allocated", "The provider never named the allocation; the cleanup sweep resolves it by the lease id.");
  }

  const handle = handleOf(lease, intent.providerLeaseId);
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

/**
 * Makes the destroy intent durable (status pending_cleanup) and takes the cleanup claim before the
 * provider hears of the destroy. An active lease gets a new intent; a pending one is continued
 * with its recorded intent if nobody else holds its claim.
 */
async function secureDestroyIntent(
  db: PrismaClient,
  lease: LeaseRow,
  afterLostRace: AfterLostRace,
): Promise<{ kind: "secured"; intent: DestroyIntent; intentJson: unknown } | { kind: "outcome"; outcome: LeaseReleaseOutcome }> {
  const claim = releaseClaimOf(lease);
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
    return { kind: "outcome", outcome: pendingOutcome(lease.id, "destroy_intent_invalid", message) };
  }
  const intentJson = (lease.metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.destroyIntent];
  if (!(await claimPendingCleanup(db, { leaseId: lease.id, ...claim, intentJson, intentKey: LEASE_METADATA_KEYS.destroyIntent }))) {
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
