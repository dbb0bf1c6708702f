// Finishing an operator's Discard that its request did not finish: the request died or
// lost the database after recording its intent, before or after the destroy, so the lease still
// carries the intent with no final record and no live claim (discard-intent.ts says why a live
// request's claim is short). The lease cleanup sweep calls this for each such lease it selects.
//   1. Under the lease's row lock: the intent is read and checked again against the lease (the
//      allocation and plugin it names are still the lease's, R-EX-6), and every open recovery
//      action that names the lease must be one the operator acknowledged: an action opened since
//      still needs the files, and nobody has given them up for it (R-FO-5), so nothing is destroyed
//      and a repeat Discard must acknowledge it. Then the resumption takes the claim.
//   2. The destroy again, through the lease's pinned plugin only (R-EX-6); destroy is idempotent,
//      so a sandbox the request already destroyed is simply gone.
//   3. The same final transaction as the request's own (record-discard.ts), with the intent's
//      request id, actor, reason and actions: the receipt is the operator's, finished by the system.
// What cannot finish is recorded and put off (recordDiscardFailure), the intent kept.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { isDomainError, messageOf } from "../errors";
import { pluginForLease } from "../leases/plugin-for-lease";
import type { LeaseProviderRegistry } from "../leases/lease-types";
import { hasCapability } from "../providers/registry";
import { lockOpenActionsNamingLease } from "./lease-open-actions";
import { DISCARD_CLAIM_MS, readDiscardIntent, resumeClaimOf, whileClaimed } from "./discard-intent";
import { recordDiscard, recordDiscardFailure } from "./record-discard";

export type ResumeDiscardOutcome =
  | "discard_finished"
  | "settled_elsewhere"
  | "claimed"
  | "not_due"
  | "discard_intent_invalid"
  | "discard_lease_changed"
  | "discard_unacknowledged_action"
  | "provider_plugin_unavailable"
  | "provider_plugin_mismatch"
  | "provider_capability_missing"
  | "provider_destroy_failed";

interface LockedLease {
  id: string;
  company_id: string;
  status: string;
  provider: string;
  plugin_id: string;
  provider_lease_id: string | null;
  metadata: unknown;
  claimed: boolean;
  due: boolean;
}

export async function resumeDiscard(deps: { db: PrismaClient; registry: LeaseProviderRegistry; by: string }, leaseId: string): Promise<ResumeDiscardOutcome> {
  const { db } = deps;
  const admitted = await withTransaction(db, async (tx) => {
    const [lease] = await tx.$queryRaw<LockedLease[]>`
      SELECT l.id, l.company_id, l.status::text AS status, l.provider::text AS provider, l.plugin_id, l.provider_lease_id, l.metadata,
        (l.cleanup_claimed_until IS NOT NULL AND l.cleanup_claimed_until >= now()) AS claimed,
        (l.next_cleanup_at IS NULL OR l.next_cleanup_at <= now()) AS due
      FROM environment_leases l WHERE l.id = ${leaseId}::uuid FOR UPDATE`;
    if (!lease || lease.status === "destroyed") return { kind: "done" as const, outcome: "settled_elsewhere" as const };
    // Selected a moment ago, but another finisher (the request, a repeat Discard, another worker) may hold it now.
    if (lease.claimed) return { kind: "done" as const, outcome: "claimed" as const };
    if (!lease.due) return { kind: "done" as const, outcome: "not_due" as const };
    const read = readDiscardIntent(lease.metadata);
    const refuse = async (outcome: ResumeDiscardOutcome, message: string) => {
      await recordDiscardFailure(tx, { leaseId, claim: null, failure: { code: outcome, message }, spentAttempt: false });
      return { kind: "done" as const, outcome };
    };
    if (read.kind !== "present") return refuse("discard_intent_invalid", read.kind === "invalid" ? read.message : "the discard intent is gone");
    const intent = read.intent;
    // Never another allocation, never through another plugin than the one the operator's request pinned (R-EX-6).
    if (lease.provider_lease_id !== intent.providerLeaseId || (intent.pluginId !== undefined && intent.pluginId !== lease.plugin_id)) {
      return refuse("discard_lease_changed", "The lease's allocation or plugin is not the one the Discard named; nothing is destroyed. Discard again after checking the sandbox.");
    }
    const open = await lockOpenActionsNamingLease(tx, { companyId: lease.company_id, leaseId });
    const acknowledged = new Set(intent.actionIds);
    const unacknowledged = open.filter((id) => !acknowledged.has(id));
    if (unacknowledged.length > 0) {
      return refuse("discard_unacknowledged_action", `Recovery action(s) ${unacknowledged.join(", ")} opened on this sandbox after the Discard was admitted; nothing is destroyed: Discard again acknowledging them.`);
    }
    const claim = resumeClaimOf(intent.requestId, deps.by);
    await tx.$executeRaw`
      UPDATE environment_leases SET cleanup_claimed_by = ${claim}, cleanup_claimed_until = now() + ${DISCARD_CLAIM_MS}::double precision * interval '1 millisecond', updated_at = now()
      WHERE id = ${leaseId}::uuid`;
    return { kind: "claimed" as const, lease, intent, claim };
  });
  if (admitted.kind === "done") return admitted.outcome;
  const { lease, intent, claim } = admitted;
  const providerLeaseId = intent.providerLeaseId;

  return whileClaimed(db, { leaseId, claim }, async () => {
    // R-EX-6: exactly the plugin pinned on the lease; unavailable or lacking destroy defers, asking the provider nothing.
    const found = pluginForLease(deps.registry, { pluginId: lease.plugin_id, provider: lease.provider });
    if (found.kind === "unavailable") return fail(db, leaseId, claim, found.code, found.message, false);
    if (!hasCapability(found.plugin, "destroy")) return fail(db, leaseId, claim, "provider_capability_missing", `The provider plugin ${lease.plugin_id} does not support destroy.`, false);
    try {
      await found.plugin.destroy!({ leaseId, pluginId: lease.plugin_id, providerLeaseId });
    } catch (error) {
      return fail(db, leaseId, claim, "provider_destroy_failed", describe(error), true);
    }
    const receipt = await withTransaction(db, (tx) =>
      recordDiscard(tx, { lease: { id: leaseId, companyId: lease.company_id, pluginId: lease.plugin_id, providerLeaseId }, intent, claim, finishedBy: "reconciler" }),
    );
    return receipt ? "discard_finished" : "settled_elsewhere";
  });
}

async function fail(db: PrismaClient, leaseId: string, claim: string, code: ResumeDiscardOutcome, message: string, spentAttempt: boolean): Promise<ResumeDiscardOutcome> {
  await recordDiscardFailure(db, { leaseId, claim, failure: { code, message }, spentAttempt });
  return code;
}

function describe(error: unknown): string {
  const code = isDomainError(error) ? `${error.code}: ` : "";
  return `${code}${messageOf(error)}`;
}
