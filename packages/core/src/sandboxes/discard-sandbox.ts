// Discard of a retained sandbox by a board operator. Nothing else ever
// decides to discard one: the ordinary cleanup selects only pending_cleanup leases with an intent,
// and the reuse of a lease refuses held ones (lease-holds.ts). In order:
//   1. one transaction, the lease row locked: the snapshot (held? which open actions name it? a
//      cleanup claim in flight?) and decideDiscard: the immutable allocation id must match the
//      lease's, every open action that still needs the files must be named and acknowledged. Admitted,
//      the discard intent (who, why, which actions, which allocation and plugin, request id) and a
//      short cleanup claim are written on the lease, so no sweep stops or resumes it meanwhile and a
//      crash leaves the intent visible (discard-intent.ts: the claim is renewed while this request
//      lives, so it lapses soon after the request dies);
//   2. the destroy, through the lease's pinned plugin only (R-EX-6; destroy is idempotent);
//   3. the final transaction (record-discard.ts, shared with the resumption): the lease
//      `destroyed` with the confirmed destruction receipt, each acknowledged action records that
//      its files were given up, one activity row. A database that is briefly away is tried again
//      a few times while the claim is renewed.
// Interrupted anywhere after step 1 (the process killed, the database gone past those tries), the
// intent is resumable: once the claim lapsed, the lease cleanup sweep finishes it
// (resume-discard.ts), and a repeat Discard is a new admission that resumes it (its intent names
// the one it resumes). A repeat while the claim is live is refused `cleanup_in_progress`, saying
// until when; two Discards at once are serialized by the row lock, so only one is admitted.
// A failed destroy changes no status: the failure is recorded, the claim given back, and the intent
// kept (the operator's decision stands; the sweep tries again by the cleanup backoff, a repeat
// Discard at once). Answers the exact lease and action ids.
import { randomUUID } from "node:crypto";
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { boundElsewhere } from "../deployment/host-id";
import { conflict, DomainError, isDomainError, messageOf } from "../errors";
import { confirmedDestruction, DESTRUCTION_RECEIPT_SCHEMA } from "../leases/destruction-receipt";
import { leaseHeldSql, UNSETTLED_FINALIZATION_SQL } from "../leases/lease-holds";
import { lockOpenActionsNamingLease } from "./lease-open-actions";
import { LEASE_METADATA_KEYS } from "../leases/lease-metadata";
import type { LeaseProviderRegistry } from "../leases/lease-types";
import { requireCapability } from "../providers/registry";
import { decideDiscard } from "./decide-discard";
import type { Actor } from "../records/record-activity";
import { DISCARD_CLAIM_MS, DISCARD_INTENT_SCHEMA, discardClaimOf, readDiscardIntent, whileClaimed, type DiscardIntent } from "./discard-intent";
import { recordDiscard, recordDiscardFailure, type DestructionReceipt, type DiscardedLease } from "./record-discard";

export { DISCARD_INTENT_SCHEMA };
export type { DestructionReceipt };
// The receipt's schema is read back by reconstruction (R-RC-1); one spelling, in leases/destruction-receipt.ts.
export { DESTRUCTION_RECEIPT_SCHEMA };

export interface DiscardDeps {
  db: PrismaClient;
  registry: LeaseProviderRegistry;
  /** The wait between tries of the final transaction (tests pass one that returns at once). */
  sleep?: (ms: number) => Promise<unknown>;
  /**
   * This process's host id (deployment/host-id.ts). Issue 23: a host-local sandbox (its lease's
   * host_id) of another host is refused, changing nothing: its directory and processes are there.
   */
  hostId?: string;
}

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

interface LockedLease {
  id: string;
  company_id: string;
  status: string;
  provider: string;
  plugin_id: string;
  provider_lease_id: string | null;
  host_id: string | null;
  metadata: unknown;
  held: boolean;
  claimed_until: Date | null;
  copyback_pending: string | null;
}

export async function discardRetainedSandbox(deps: DiscardDeps, input: DiscardInput): Promise<DiscardResult> {
  const { db } = deps;
  const requestId = randomUUID();
  const claim = discardClaimOf(requestId);
  const reason = input.reason.trim();
  const admitted = await withTransaction(db, async (tx) => {
    const [lease] = await tx.$queryRaw<LockedLease[]>`
      SELECT l.id, l.company_id, l.status::text AS status, l.provider::text AS provider, l.plugin_id, l.provider_lease_id, l.host_id, l.metadata,
        ${leaseHeldSql("l")} AS held,
        CASE WHEN l.cleanup_claimed_until IS NOT NULL AND l.cleanup_claimed_until > now() THEN l.cleanup_claimed_until END AS claimed_until,
        (SELECT nf.phase::text FROM native_run_finalizations nf
         WHERE nf.run_id = l.run_id AND nf.phase IN ${UNSETTLED_FINALIZATION_SQL}) AS copyback_pending
      FROM environment_leases l WHERE l.id = ${input.leaseId}::uuid AND l.company_id = ${input.companyId}::uuid
      FOR UPDATE OF l`;
    // Issue 23: nothing on this host destroys another host's local sandbox; before any write.
    const otherHost = deps.hostId === undefined ? null : boundElsewhere(lease?.host_id, deps.hostId);
    if (otherHost) {
      throw conflict("sandbox_on_other_host", `This sandbox lives on host ${otherHost}; discard it from a console or CLI of that host (this one is ${deps.hostId}).`, { leaseHostId: otherHost, hostId: deps.hostId });
    }
    const actionIds = lease ? await lockOpenActionsNamingLease(tx, { companyId: input.companyId, leaseId: input.leaseId }) : [];
    const previous = lease ? readDiscardIntent(lease.metadata) : ({ kind: "absent" } as const);
    const previousRequestId = previous.kind === "present" ? previous.intent.requestId : null;
    const claimedUntil = lease?.claimed_until ?? null;
    const decision = decideDiscard(
      {
        lease: lease
          ? {
              status: lease.status,
              providerLeaseId: lease.provider_lease_id,
              held: lease.held,
              claimedByOther: claimedUntil !== null,
              claim: claimedUntil === null ? null : { until: claimedUntil.toISOString(), discardRequestId: previousRequestId },
              copybackPending: lease.copyback_pending,
            }
          : null,
        openActionIds: actionIds,
      },
      { providerLeaseId: input.providerLeaseId, acknowledgedActionIds: input.acknowledgedActionIds, reason },
    );
    if (decision.kind === "reject") {
      throw new DomainError(decision.code === "lease_not_found" ? "not_found" : decision.code === "reason_required" ? "invalid" : "conflict", decision.code, decision.message, decision.details);
    }
    // A repeat Discard of an unfinished one (its claim lapsed: its request is gone; or given back
    // after a failed destroy) is a new admission on the lease as it is now, so its acknowledgements
    // are checked again (an action opened since must be acknowledged too), and its intent names the
    // one it resumes; the destroy is idempotent whether or not that one got to it.
    const intent: DiscardIntent = {
      schema: DISCARD_INTENT_SCHEMA,
      requestId,
      by: input.actor,
      reason,
      actionIds: decision.actionIds,
      providerLeaseId: input.providerLeaseId,
      pluginId: lease!.plugin_id,
      at: new Date().toISOString(),
      ...(previousRequestId ? { resumes: previousRequestId } : {}),
    };
    await tx.$executeRaw`
      UPDATE environment_leases
      SET metadata = metadata || jsonb_build_object(${LEASE_METADATA_KEYS.discardIntent}::text, ${JSON.stringify(intent)}::jsonb),
          cleanup_claimed_by = ${claim}, cleanup_claimed_until = now() + ${DISCARD_CLAIM_MS}::double precision * interval '1 millisecond',
          updated_at = now()
      WHERE id = ${input.leaseId}::uuid`;
    return { lease: lease!, intent };
  });

  const { lease, intent } = admitted;
  const discarded = { id: lease.id, companyId: lease.company_id, pluginId: lease.plugin_id, providerLeaseId: intent.providerLeaseId };
  const receipt = await whileClaimed(db, { leaseId: lease.id, claim }, async () => {
    let asked = false;
    try {
      // R-EX-6: exactly the plugin pinned on the lease; a missing one is refused, never replaced.
      const plugin = deps.registry.forLease({ pluginId: lease.plugin_id, provider: lease.provider });
      requireCapability(plugin, "destroy");
      asked = true;
      await plugin.destroy!({ leaseId: lease.id, pluginId: lease.plugin_id, providerLeaseId: discarded.providerLeaseId });
    } catch (error) {
      const failure = { code: String((error as { code?: unknown }).code ?? "provider_destroy_failed"), message: messageOf(error) };
      // The destroy's own error is the answer; a database too far gone to take the failure leaves the
      // claim to lapse, and the sweep then tries the destroy again.
      await recordDiscardFailure(db, { leaseId: lease.id, claim, failure, spentAttempt: asked }).catch(() => undefined);
      throw error;
    }
    return recordWithRetries(deps, { lease: discarded, intent, claim });
  });
  if (receipt) return { leaseId: lease.id, providerLeaseId: discarded.providerLeaseId, actionIds: intent.actionIds, receipt };
  return answerLostRecord(db, lease.id, requestId);
}

/** How long the request waits before each further try of the final transaction (a database restarting, a dropped connection: about 7.5 s in all). */
const RECORD_RETRY_MS = [500, 2_000, 5_000] as const;

async function recordWithRetries(deps: DiscardDeps, input: { lease: DiscardedLease; intent: DiscardIntent; claim: string }): Promise<DestructionReceipt | null> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await withTransaction(deps.db, (tx) => recordDiscard(tx, { ...input, finishedBy: "request" }));
    } catch (error) {
      const delay = RECORD_RETRY_MS[attempt];
      if (isDomainError(error) || delay === undefined) {
        // Give the claim back at once if the database answers again, so the sweep need not wait for it to lapse.
        await deps.db.$executeRaw`
          UPDATE environment_leases SET cleanup_claimed_until = now() WHERE id = ${input.lease.id}::uuid AND cleanup_claimed_by = ${input.claim}`.catch(() => undefined);
        throw new DomainError(
          "unavailable",
          "discard_unrecorded",
          `The sandbox was destroyed, but the record of its Discard could not be written (${messageOf(error)}). The Discard stays recorded on the lease: the reconciler finishes it shortly, or Discard again.`,
          { leaseId: input.lease.id, requestId: input.intent.requestId },
        );
      }
      await sleep(delay);
    }
  }
}

/** The final compare-and-set found the claim gone: say who finished it, or that the lease changed. */
async function answerLostRecord(db: PrismaClient, leaseId: string, requestId: string): Promise<DiscardResult> {
  const lease = await db.environmentLease.findUnique({ where: { id: leaseId }, select: { status: true, pluginId: true, providerLeaseId: true, metadata: true } });
  const verdict = lease ? confirmedDestruction(lease) : null;
  if (verdict?.kind === "confirmed" && verdict.receipt.requestId === requestId) {
    // This request's claim lapsed (the database was away past its renewals) and the reconciler
    // finished this very Discard: it is done, recorded under this request.
    const receipt = verdict.receipt as DestructionReceipt;
    return { leaseId, providerLeaseId: receipt.providerLeaseId, actionIds: receipt.actionIds, receipt };
  }
  if (verdict?.kind === "confirmed") {
    throw new DomainError("conflict", "discard_superseded", `The sandbox was destroyed, and its Discard was recorded by another request (${verdict.receipt.requestId}) that resumed this one.`, { leaseId, requestId: verdict.receipt.requestId });
  }
  throw new DomainError("conflict", "lease_changed", "The lease changed while its sandbox was destroyed; the destroy is recorded nowhere else: repeat Discard.", { leaseId });
}
