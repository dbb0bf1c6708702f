// Discard of a retained sandbox by a board operator (issue 14 section 2). Nothing else ever
// discards one: the ordinary cleanup selects only pending_cleanup leases with an intent, and the
// reuse of a lease refuses held ones (lease-holds.ts). In order:
//   1. one transaction, the lease row locked: the snapshot (held? which open actions name it? a
//      cleanup claim in flight?) and decideDiscard: the immutable allocation id must match the
//      lease's, every open action that still needs the files must be named and acknowledged. Admitted,
//      the discard intent (who, why, which actions, request id) and a cleanup claim are written on
//      the lease, so no sweep stops or resumes it meanwhile and a crash leaves the intent visible;
//   2. the destroy, through the lease's pinned plugin only (R-EX-6; destroy is idempotent);
//   3. one transaction: the lease `destroyed` with the confirmed destruction receipt (plugin,
//      allocation, request, who, why, when: the evidence reconstruction will require), each
//      acknowledged action records that its files were given up (actions.ts), one activity row.
// A failed destroy leaves the lease as it was (not destroyed), its claim given back and the
// failure recorded; repeating Discard tries again. Answers the exact lease and action ids.
import { randomUUID } from "node:crypto";
import { withTransaction, type Prisma, type PrismaClient } from "@copyback/db/client";
import { DomainError } from "../errors";
import { DESTRUCTION_RECEIPT_SCHEMA } from "../leases/destruction-receipt";
import { leaseHeldSql } from "../leases/lease-holds";
import { LEASE_METADATA_KEYS } from "../leases/lease-metadata";
import type { LeaseProviderRegistry } from "../leases/lease-types";
import { requireCapability } from "../providers/registry";
import { recordFilesGivenUp } from "../recovery/actions";
import { decideDiscard } from "../recovery/policies/decide-discard";
import { recordActivity, type Actor } from "../runs/record-activity";

export const DISCARD_INTENT_SCHEMA = "copyback.sandbox-discard.v1";
// The receipt's schema is read back by reconstruction (R-RC-1); one spelling, in leases/destruction-receipt.ts.
export { DESTRUCTION_RECEIPT_SCHEMA };
const CLAIM_MS = 15 * 60_000;

export interface DiscardInput {
  companyId: string;
  leaseId: string;
  /** The provider's allocation id as the operator read it (copyback sandboxes list, the console). */
  providerLeaseId: string;
  /** Every open recovery action that still needs the files, by id. */
  acknowledgedActionIds: readonly string[];
  reason: string;
  actor: Actor;
}

export interface DiscardResult {
  leaseId: string;
  providerLeaseId: string;
  actionIds: string[];
  receipt: DestructionReceipt;
}

export interface DestructionReceipt {
  schema: typeof DESTRUCTION_RECEIPT_SCHEMA;
  confirmed: true;
  requestId: string;
  pluginId: string;
  providerLeaseId: string;
  destroyedAt: string;
  by: Actor;
  reason: string;
  actionIds: string[];
}

interface LockedLease {
  id: string;
  company_id: string;
  status: string;
  provider: string;
  plugin_id: string;
  provider_lease_id: string | null;
  held: boolean;
  claimed: boolean;
}

export async function discardRetainedSandbox(deps: { db: PrismaClient; registry: LeaseProviderRegistry }, input: DiscardInput): Promise<DiscardResult> {
  const { db } = deps;
  const requestId = randomUUID();
  const reason = input.reason.trim();
  const admitted = await withTransaction(db, async (tx) => {
    const [lease] = await tx.$queryRaw<LockedLease[]>`
      SELECT l.id, l.company_id, l.status::text AS status, l.provider::text AS provider, l.plugin_id, l.provider_lease_id,
        ${leaseHeldSql("l")} AS held,
        (l.cleanup_claimed_until IS NOT NULL AND l.cleanup_claimed_until > now()) AS claimed
      FROM environment_leases l WHERE l.id = ${input.leaseId}::uuid AND l.company_id = ${input.companyId}::uuid
      FOR UPDATE`;
    const actions = lease
      ? await tx.$queryRaw<{ id: string }[]>`
          SELECT ra.id FROM issue_recovery_actions ra
          WHERE ra.company_id = ${input.companyId}::uuid AND ra.status IN ('active', 'escalated')
            AND (ra.lease_id = ${input.leaseId}::uuid OR ra.evidence -> 'leaseIds' @> jsonb_build_array(${input.leaseId}::text))
          ORDER BY ra.created_at, ra.id FOR UPDATE`
      : [];
    const decision = decideDiscard(
      {
        lease: lease ? { status: lease.status, providerLeaseId: lease.provider_lease_id, held: lease.held, claimedByOther: lease.claimed } : null,
        openActionIds: actions.map((a) => a.id),
      },
      { providerLeaseId: input.providerLeaseId, acknowledgedActionIds: input.acknowledgedActionIds, reason },
    );
    if (decision.kind === "reject") {
      throw new DomainError(decision.code === "lease_not_found" ? "not_found" : decision.code === "reason_required" ? "invalid" : "conflict", decision.code, decision.message, decision.details);
    }
    const intent = { schema: DISCARD_INTENT_SCHEMA, requestId, by: input.actor, reason, actionIds: decision.actionIds, providerLeaseId: input.providerLeaseId, at: new Date().toISOString() };
    await tx.$executeRaw`
      UPDATE environment_leases
      SET metadata = metadata || jsonb_build_object(${LEASE_METADATA_KEYS.discardIntent}::text, ${JSON.stringify(intent)}::jsonb),
          cleanup_claimed_by = ${`discard:${requestId}`}, cleanup_claimed_until = now() + ${CLAIM_MS}::double precision * interval '1 millisecond',
          updated_at = now()
      WHERE id = ${input.leaseId}::uuid`;
    return { lease: lease!, actionIds: decision.actionIds };
  });

  const { lease } = admitted;
  const providerLeaseId = lease.provider_lease_id as string;
  try {
    // R-EX-6: exactly the plugin pinned on the lease; a missing one is refused, never replaced.
    const plugin = deps.registry.forLease({ pluginId: lease.plugin_id, provider: lease.provider });
    requireCapability(plugin, "destroy");
    await plugin.destroy!({ leaseId: lease.id, pluginId: lease.plugin_id, providerLeaseId });
  } catch (error) {
    const failure = { code: (error as { code?: unknown }).code ?? "provider_destroy_failed", message: error instanceof Error ? error.message : String(error), at: new Date().toISOString() };
    await db.$executeRaw`
      UPDATE environment_leases
      SET metadata = metadata || jsonb_build_object(${LEASE_METADATA_KEYS.failure}::text, ${JSON.stringify(failure)}::jsonb),
          cleanup_claimed_by = NULL, cleanup_claimed_until = NULL, updated_at = now()
      WHERE id = ${lease.id}::uuid AND cleanup_claimed_by = ${`discard:${requestId}`}`;
    throw error;
  }

  const receipt: DestructionReceipt = {
    schema: DESTRUCTION_RECEIPT_SCHEMA,
    confirmed: true,
    requestId,
    pluginId: lease.plugin_id,
    providerLeaseId,
    destroyedAt: new Date().toISOString(),
    by: input.actor,
    reason,
    actionIds: admitted.actionIds,
  };
  await withTransaction(db, async (tx) => {
    const moved = await tx.$executeRaw`
      UPDATE environment_leases
      SET status = 'destroyed'::lease_status, released_at = COALESCE(released_at, now()),
          metadata = metadata || jsonb_build_object(${LEASE_METADATA_KEYS.destructionReceipt}::text, ${JSON.stringify(receipt)}::jsonb),
          cleanup_claimed_by = NULL, cleanup_claimed_until = NULL, updated_at = now()
      WHERE id = ${lease.id}::uuid AND status IN ('active', 'released', 'pending_cleanup') AND cleanup_claimed_by = ${`discard:${requestId}`}`;
    if (moved !== 1) throw new DomainError("conflict", "lease_changed", "The lease changed while its sandbox was destroyed; the destroy is recorded nowhere else: repeat Discard.");
    await recordFilesGivenUp(tx, { actionIds: admitted.actionIds, leaseId: lease.id, providerLeaseId: lease.provider_lease_id, by: input.actor, reason, receipt });
    await recordActivity(tx, {
      companyId: input.companyId,
      actor: input.actor,
      action: "sandbox.discarded",
      entityType: "environment_lease",
      entityId: lease.id,
      details: { providerLeaseId, pluginId: lease.plugin_id, reason, actionIds: admitted.actionIds, requestId } as Prisma.InputJsonObject,
    });
  });
  return { leaseId: lease.id, providerLeaseId, actionIds: admitted.actionIds, receipt };
}
