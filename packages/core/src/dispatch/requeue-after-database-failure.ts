// A run whose setup met a database failure before its agent was started goes back to the queue
// (database-outage-policy.ts says why that is safe). Before the run is queued, what this
// attempt created is settled, so nothing leaks and the next attempt starts clean:
//   1. its running preparation is closed `failed` under its own live recovery claim (R-FO-4: another
//      holder's or a stale claim refuses, and then nothing at all is cleaned up here);
//   2. each lease of the run still `active` (only this attempt's: an earlier one was settled before
//      its requeue) is released by policy as a run whose agent never started (release-policy.ts:
//      destroyed, or stopped and released for reuse on reuse_by_environment: its run is queued, not
//      failed, so the held-lease rule of lease-holds.ts does not hold it), or, when the provider's
//      allocation was never recorded on it, left `pending_cleanup` with its destroy intent for the
//      cleanup sweep. Releasing first matters: an `active` ephemeral lease under a queued run would
//      make every later acquisition of the run `lease_busy`;
//   3. the run is requeued by requeue-run.ts (compare-and-set on `running` and this controller, the
//      untouched `observed` coordinator row removed), with the run event saying why.
// Each step is idempotent, so the sequence is simply tried again while the database keeps failing,
// with backoff, for a bounded wait. When the wait runs out (or the worker stops), nothing more is
// written: the run stays `running` under this controller, which no longer executes it, and the
// reconciler's orphan sweep (controller-liveness.ts: a run of this live process that it no longer
// executes is orphaned) ends it `process_lost` once the database answers, through the conditional
// write of R-ORP-2. It is never left running.
import { setTimeout as delay } from "node:timers/promises";
import type { PrismaClient } from "@copyback/db";
import { withTransaction } from "@copyback/db/client";
import { isDatabaseFailure } from "../database-failure";
import { newDestroyIntent } from "../leases/destroy-lease";
import { failureOf } from "../leases/lease-failure";
import { LEASE_METADATA_KEYS } from "../leases/lease-metadata";
import type { LeaseProviderRegistry, LeaseReleaseOutcome } from "../leases/lease-types";
import { releaseLeaseByPolicy } from "../leases/release-lease";
import { transitionLease } from "../leases/transition-lease";
import type { ProcessIdentity } from "../process/process-identity";
import type { ClaimVerdict } from "../recovery/policies/decide-file-recovery";
import { lockRunningPreparations, settlePreparation } from "../records/preparation-claim";
import { DATABASE_UNAVAILABLE, decideAttemptLease, decideOwnPreparation, decideRequeueBudget, requeueMessage, type SetupStep } from "./database-outage-policy";
import { requeueRun } from "./requeue-run";

export interface OutageRequeueDeps {
  db: PrismaClient;
  registry: LeaseProviderRegistry;
  controller: ProcessIdentity;
}

export interface OutageRequeueInput {
  runId: string;
  companyId: string;
  step: SetupStep;
  /** The failed preparation and the token of its claim, when the preparation reported them. */
  preparation?: { operationId: string; token: string };
  /** The database failure itself (recorded on a lease left for the sweep). */
  error: unknown;
}

export type OutageRequeueOutcome =
  | { kind: "requeued"; leases: LeaseSettlement[] }
  /** The run was no longer running under this controller when it was to be queued. */
  | { kind: "settled_elsewhere"; leases: LeaseSettlement[] }
  /** The run has gone back to the queue for the database MAX_DATABASE_REQUEUES times already. */
  | { kind: "requeues_spent"; requeues: number }
  /** R-FO-4: a running preparation is not this executor's live claim: nothing was written. */
  | { kind: "preparation_refused"; reason: Extract<ClaimVerdict, { kind: "refused" }>["reason"] }
  /** The database still failed when the wait ran out: nothing more is written here. */
  | { kind: "gave_up"; error: unknown }
  /** Not the database's failure while settling (a provider's refusal, a bug): the caller fails the run. */
  | { kind: "unsettled"; error: unknown };

export interface LeaseSettlement {
  leaseId: string;
  result: LeaseReleaseOutcome["kind"] | "destroy_intent_recorded" | "left";
}

/** How long the database is waited for before the run is left to the reconciler (below a preparation claim's 15 minutes). */
export const DATABASE_OUTAGE_WAIT_MS = 5 * 60_000;

export async function requeueAfterDatabaseFailure(
  deps: OutageRequeueDeps,
  input: OutageRequeueInput,
  options: { signal: AbortSignal; waitMs?: number },
): Promise<OutageRequeueOutcome> {
  const deadline = Date.now() + (options.waitMs ?? DATABASE_OUTAGE_WAIT_MS);
  let backoff = 250;
  for (;;) {
    try {
      return await settleAndRequeue(deps, input);
    } catch (error) {
      if (!isDatabaseFailure(error)) return { kind: "unsettled", error };
      const left = deadline - Date.now();
      if (left <= 0 || options.signal.aborted) return { kind: "gave_up", error };
      await delay(Math.min(backoff, left), undefined, { signal: options.signal }).catch(() => undefined);
      backoff = Math.min(backoff * 2, 5_000);
    }
  }
}

async function settleAndRequeue(deps: OutageRequeueDeps, input: OutageRequeueInput): Promise<OutageRequeueOutcome> {
  const { db } = deps;
  const budget = decideRequeueBudget(await earlierDatabaseRequeues(db, input.runId));
  if (budget.kind === "spent") {
    // The run fails through the ordinary handlers, which know only the leases they were handed: an
    // allocation the lease never recorded gets its destroy intent here all the same.
    await settleAttemptLeases(deps, input, { releaseAllocations: false });
    return { kind: "requeues_spent", requeues: budget.requeues };
  }

  const refused = await settleOwnPreparations(deps, input);
  if (refused) return refused;
  const leases = await settleAttemptLeases(deps, input, { releaseAllocations: true });

  const requeued = await requeueRun(db, {
    runId: input.runId,
    companyId: input.companyId,
    controller: deps.controller,
    code: DATABASE_UNAVAILABLE,
    message: requeueMessage(input.step),
    payload: { step: input.step },
  });
  return requeued ? { kind: "requeued", leases } : { kind: "settled_elsewhere", leases };
}

/** The run's `active` leases (this attempt's), settled by decideAttemptLease; recorded allocations only with `releaseAllocations`. */
async function settleAttemptLeases(deps: OutageRequeueDeps, input: OutageRequeueInput, options: { releaseAllocations: boolean }): Promise<LeaseSettlement[]> {
  const { db } = deps;
  const leases: LeaseSettlement[] = [];
  for (const lease of await db.environmentLease.findMany({ where: { runId: input.runId, status: "active" }, orderBy: { createdAt: "asc" } })) {
    const decision = decideAttemptLease(lease);
    if (decision.kind === "release_by_policy" && options.releaseAllocations) {
      const released = await releaseLeaseByPolicy(db, deps.registry, { leaseId: lease.id, runId: input.runId, outcome: "agent_not_started" });
      leases.push({ leaseId: lease.id, result: released.kind });
    } else if (decision.kind === "destroy_intent") {
      const intent = newDestroyIntent(lease, { providerLeaseId: null, reason: "acquire_unconfirmed" });
      const recorded = await transitionLease(db, {
        leaseId: lease.id,
        from: ["active"],
        to: "pending_cleanup",
        metadataPatch: { [LEASE_METADATA_KEYS.destroyIntent]: intent, [LEASE_METADATA_KEYS.failure]: failureOf(input.error, DATABASE_UNAVAILABLE) },
      });
      leases.push({ leaseId: lease.id, result: recorded ? "destroy_intent_recorded" : "left" });
    }
  }
  return leases;
}

/** The run's earlier requeues for the database (its run events, which requeueRun writes with the move). */
async function earlierDatabaseRequeues(db: PrismaClient, runId: string): Promise<number> {
  const events = await db.runEvent.findMany({ where: { runId, code: "run.requeued" }, select: { payload: true } });
  return events.filter((event) => (event.payload as { reason?: unknown } | null)?.reason === DATABASE_UNAVAILABLE).length;
}

/** R-FO-4: closes the run's running preparations if every one is this executor's live claim; otherwise writes nothing. */
async function settleOwnPreparations(deps: OutageRequeueDeps, input: OutageRequeueInput): Promise<Extract<OutageRequeueOutcome, { kind: "preparation_refused" }> | null> {
  return withTransaction(deps.db, async (tx) => {
    const running = await lockRunningPreparations(tx, input.runId);
    if (running.length === 0) return null;
    const [{ now }] = await tx.$queryRaw<[{ now: Date }]>`SELECT clock_timestamp() AS now`;
    for (const operation of running) {
      const token = input.preparation?.operationId === operation.id ? input.preparation.token : null;
      const verdict = decideOwnPreparation({ status: "running", claim: operation.claim, token, self: deps.controller, now });
      if (verdict.kind === "refused") return { kind: "preparation_refused" as const, reason: verdict.reason };
    }
    for (const operation of running) await settlePreparation(tx, operation.id, { errorCode: DATABASE_UNAVAILABLE, settledBy: "claim_holder" });
    return null;
  });
}
