// The lease cleanup sweep (DESIGN.md section 8): `pending_cleanup` leases whose
// next cleanup is due are selected through the partial index environment_leases_cleanup_due,
// O(due), in bounded batches, the longest-waiting of each company first (fair across companies),
// and their recorded intent is continued by the SAME code as a live release
// (continueLeaseCleanup: the stop-and-retain of release-lease.ts, the destroy of destroy-lease.ts,
// the claims of transition-lease.ts). What that code guarantees, the sweep inherits:
//   - the exact allocation through the lease's recorded plugin only (R-EX-6); an unavailable or
//     mismatched plugin, or one without the operation, defers without spending an attempt, and
//     without `environmentStopLease` a stop intent gets neither release nor destroy (R-SO-3);
//   - v2 intents must pin that plugin, v1 intents are recovered with it (R-EX-7), and an intent
//     naming another lease row, company, run or allocation grants nothing (R-EX-5);
//   - the 15-minute cleanup claim is held while a request is in flight; a live claim is never
//     taken over, and the takeover is taken only while the lease is due (two sweeps never both
//     spend an attempt);
//   - only a confirmed receipt for the intent's request, plugin and allocation, by the method that
//     plugin may use, releases (an unconfirmed stop or a stale receipt never does); a failed or
//     unconfirmed attempt is counted and scheduled by the cleanup backoff (provider-retry-policy.ts);
//   - a destroy intent is continued (after a commit, or an acquisition whose reply never came:
//     that allocation is named by acquiring again with the lease id, then destroyed).
// Before taking over, the sweep refuses a lease whose allocation another unsettled lease also
// claims (a competing owner, R-EX-5): it is deferred with a note, never stopped or destroyed.
//
// It also finishes operators' Discards that their requests did not finish: a lease,
// whatever its status short of `destroyed`, that carries a discard intent with no live claim
// (sandboxes/discard-intent.ts: a live request renews its short claim) and whose next try is due,
// selected through the partial index environment_leases_discard_due in the same bounded, fair
// way, is handed to resumeDiscard (the destroy again through the pinned plugin, then the request's
// own final transaction). Such a lease is never continued as an ordinary cleanup, even when it is
// `pending_cleanup`: the operator's Discard supersedes its stop or destroy intent.
//
// Otherwise only `pending_cleanup` leases are selected: a released, confirmed-stopped allocation
// is never touched here for its age (R-DT-3; only an operator's recorded Discard destroys one), and
// nothing here returns a lease to reuse (acquire-lease.ts decides reuse; a `retain_on_failure`
// source is never a candidate, R-RR-6).
import { Prisma, type PrismaClient } from "@copyback/db/client";
import { CLEANUP_CLAIM_MS } from "../../leases/lease-cleanup";
import { LEASE_METADATA_KEYS } from "../../leases/lease-metadata";
import type { LeaseProviderRegistry, LeaseReleaseOutcome } from "../../leases/lease-types";
import { continueLeaseCleanup } from "../../leases/release-lease";
import { deferCleanup } from "../../leases/transition-lease";
import { resumeDiscard } from "../../sandboxes/resume-discard";
import { leaseOnHostSql } from "./host-bound-sweep";
import type { ProcessIdentity } from "../../process/process-identity";
import type { Sweep, SweepLog } from "./sweep";

export interface LeaseCleanupUnit {
  leaseId: string;
  companyId: string;
}

// Spelled as a literal, not a parameter, so that the planner can match the partial index's
// predicate with any plan (a generic plan of a parameter could not prove it).
const DISCARD_INTENT_KEY = Prisma.raw(`'${LEASE_METADATA_KEYS.discardIntent}'`);

/** The unfinished Discards whose next try is due (bench and tests read its plan). */
export function dueDiscardResumptionsSql(limit: number, hostId?: string): Prisma.Sql {
  return Prisma.sql`
    WITH due AS (
      SELECT l.id, l.company_id, l.next_cleanup_at,
             row_number() OVER (PARTITION BY l.company_id ORDER BY l.next_cleanup_at NULLS FIRST, l.id) AS company_rank
      FROM environment_leases l
      WHERE l.status <> 'destroyed'::lease_status AND jsonb_typeof(l.metadata -> ${DISCARD_INTENT_KEY}) = 'object'
        AND (l.next_cleanup_at IS NULL OR l.next_cleanup_at <= now())
        AND (l.cleanup_claimed_until IS NULL OR l.cleanup_claimed_until < now())
        AND ${leaseOnHostSql("l", hostId)}
    )
    SELECT id AS "leaseId", company_id AS "companyId" FROM due
    ORDER BY company_rank, next_cleanup_at NULLS FIRST, id
    LIMIT ${limit}`;
}

export interface LeaseCleanupSweepDeps {
  db: PrismaClient;
  registry: LeaseProviderRegistry;
  /** This worker: its cleanup claims name it (`sweep:<host>:<pid>`). */
  controller?: Pick<ProcessIdentity, "host" | "pid">;
  log?: SweepLog;
  /** The destroy backoff's sleep (tests pass one that returns at once). */
  sleep?: (ms: number) => Promise<unknown>;
  /** Issue 23: this worker's host id; another host's local sandboxes are never due here. */
  hostId?: string;
}

/** The due selection (bench and tests read its plan). */
export function dueLeaseCleanupsSql(limit: number, hostId?: string): Prisma.Sql {
  return Prisma.sql`
    WITH due AS (
      SELECT l.id, l.company_id, l.next_cleanup_at,
             row_number() OVER (PARTITION BY l.company_id ORDER BY l.next_cleanup_at NULLS FIRST, l.id) AS company_rank
      FROM environment_leases l
      WHERE l.status = 'pending_cleanup'::lease_status
        AND (l.next_cleanup_at IS NULL OR l.next_cleanup_at <= now())
        AND (l.cleanup_claimed_until IS NULL OR l.cleanup_claimed_until < now())
        AND ${leaseOnHostSql("l", hostId)}
    )
    SELECT id AS "leaseId", company_id AS "companyId" FROM due
    ORDER BY company_rank, next_cleanup_at NULLS FIRST, id
    LIMIT ${limit}`;
}

export function leaseCleanupSweep(deps: LeaseCleanupSweepDeps): Sweep<LeaseCleanupUnit> {
  const { db } = deps;
  const claim = { by: `sweep:${deps.controller ? `${deps.controller.host}:${deps.controller.pid}` : process.pid}`, forMs: CLEANUP_CLAIM_MS };
  return {
    name: "lease_cleanup",
    idOf: (unit) => unit.leaseId,
    // The Discards first (few, and an operator waits on each), then the cleanups, within one bound.
    async due(limit) {
      const discards = await db.$queryRaw<LeaseCleanupUnit[]>(dueDiscardResumptionsSql(limit, deps.hostId));
      if (discards.length >= limit) return discards;
      const taken = new Set(discards.map((u) => u.leaseId));
      const cleanups = await db.$queryRaw<LeaseCleanupUnit[]>(dueLeaseCleanupsSql(limit, deps.hostId));
      return [...discards, ...cleanups.filter((u) => !taken.has(u.leaseId))].slice(0, limit);
    },
    async handle(unit) {
      const lease = await db.environmentLease.findUnique({ where: { id: unit.leaseId } });
      if (!lease || lease.status === "destroyed") return "settled_elsewhere";
      if (hasDiscardIntent(lease.metadata)) return resumeDiscard({ db, registry: deps.registry, by: claim.by }, lease.id);
      if (lease.status !== "pending_cleanup") return "settled_elsewhere";
      const now = Date.now();
      // Selected a moment ago, but another worker may have taken it since: nothing is written.
      if (lease.cleanupClaimedUntil && lease.cleanupClaimedUntil.getTime() >= now) return "claimed";
      if (lease.nextCleanupAt && lease.nextCleanupAt.getTime() > now) return "not_due";

      // R-EX-5: never take over the cleanup of an allocation another unsettled lease claims.
      if (lease.providerLeaseId) {
        const competing = await db.environmentLease.count({
          where: {
            id: { not: lease.id },
            pluginId: lease.pluginId,
            providerLeaseId: lease.providerLeaseId,
            status: { in: ["active", "pending_cleanup", "released"] },
          },
        });
        if (competing > 0) {
          const message = "Another lease claims the same provider allocation; the cleanup is not taken over.";
          await deferCleanup(db, { leaseId: lease.id, by: claim.by, metadataPatch: { [LEASE_METADATA_KEYS.failure]: { code: "cleanup_competing_owner", message, at: new Date().toISOString() } } });
          deps.log?.warn({ leaseId: lease.id, providerLeaseId: lease.providerLeaseId }, "lease cleanup deferred: competing owner");
          return "competing_owner";
        }
      }

      const outcome = await continueLeaseCleanup(db, deps.registry, lease, {
        claim,
        takeover: true,
        resolveUnnamedAllocation: true,
        ...(deps.sleep ? { sleep: deps.sleep } : {}),
      });
      const word = outcomeWord(outcome);
      if (outcome.kind === "pending_cleanup") {
        deps.log?.info({ leaseId: lease.id, code: outcome.code }, "lease cleanup still pending");
      } else {
        deps.log?.info({ leaseId: lease.id, outcome: outcome.kind }, "reconciler settled a lease cleanup");
      }
      return word;
    },
  };
}

/** Whether the lease carries a discard intent document (an object, as the selection reads it; resumeDiscard checks it). */
function hasDiscardIntent(metadata: unknown): boolean {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return false;
  const doc = (metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.discardIntent];
  return doc !== null && typeof doc === "object" && !Array.isArray(doc);
}

function outcomeWord(outcome: LeaseReleaseOutcome): string {
  switch (outcome.kind) {
    case "destroyed":
    case "stopped_and_retained":
      return outcome.kind;
    case "pending_cleanup":
      return outcome.code;
    case "failed":
      return "failed";
  }
}
