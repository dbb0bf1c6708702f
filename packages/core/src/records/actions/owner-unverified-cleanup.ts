// How unverified-owner holds close and stay current without an operator: the commit resolves the
// run's holds, the reconciler's ordinary cleanup resolves stale ones, and open ones keep today's
// instructions. Resolutions are attributed to the system and leave the issue's activity
// timestamps and everyone's inbox alone.
import { Prisma, type PrismaClient, type TransactionClient } from "@copyback/db/client";
import { receiptSha256Sql } from "../finalization-owner-receipt";
import { OWNER_UNVERIFIED_CAUSE, OWNER_UNVERIFIED_NEXT_ACTION } from "../causes";
import { OPEN_RECOVERY_ACTION_STATUSES } from "./open-statuses";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "./open-statuses-sql";

/** R-ORP-3: verified finalization clears the run's unverified-owner holds after commitment (system). */
export function resolveOwnerHoldsOnCommit(tx: TransactionClient, input: { companyId: string; runId: string }): Promise<number> {
  return resolveRunOwnerHolds(tx, input, "copyback_committed");
}

/**
 * R-ATT-3, R-EX-1, R-EX-4: the owner that settles the run's copyback as a terminal failure opens
 * that failure's own hold (export-only retry, limit, conflict, failed copyback) in the same
 * transaction; the earlier owners' holds it took over (attested, or resumed on the same boot) have
 * nothing left to wait for, so they close with it and the run keeps one open action. The
 * reconciler's cleanup would close them later (stale_owner_receipt); closing them here leaves no
 * window with two.
 */
export function supersedeOwnerHoldsOnTerminalFailure(tx: TransactionClient, input: { companyId: string; runId: string }): Promise<number> {
  return resolveRunOwnerHolds(tx, input, "superseded_by_failure_hold");
}

async function resolveRunOwnerHolds(tx: TransactionClient, input: { companyId: string; runId: string }, outcome: string): Promise<number> {
  const resolved = await tx.issueRecoveryAction.updateMany({
    where: { companyId: input.companyId, runId: input.runId, cause: OWNER_UNVERIFIED_CAUSE, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } },
    data: { status: "resolved", outcome, resolvedAt: new Date(), resolvedByType: "system" },
  });
  return resolved.count;
}

/**
 * R-OWN-5: ordinary stale-hold cleanup. An open unverified-owner hold is stale once its run no
 * longer carries its token AND nothing is still waiting on it: the receipt was replaced by another
 * owner, or the coordinator settled. A cleared receipt under an unfinished coordinator (attested,
 * or released by the maintenance SQL) stays open until the sweep commits (R-ATT-3). An attested
 * hold stays open while its coordinator is unfinished even when a new owner's receipt is on the
 * run (R-ATT-3, R-UI-1: the reconciler that copies back after the attestation writes its own
 * receipt, and another reconciler's cleanup must not take "Restoring saved work…" away mid-copy);
 * the commit resolves it as copyback_committed (resolveOwnerHoldsOnCommit), and a newer owner that
 * dies supersedes it with its own hold. Task completion or cancellation plays no part. Attributed
 * to the system; no activity row, no issue timestamp.
 */
export async function cleanupStaleOwnerActions(db: PrismaClient, limit: number): Promise<number> {
  const stale = await db.$queryRaw<{ id: string; final_phase: string | null }[]>(Prisma.sql`
    SELECT a.id, CASE WHEN f.phase IN ('committed', 'terminal_failure') THEN f.phase::text END AS final_phase
    FROM issue_recovery_actions a
    JOIN heartbeat_runs r ON r.id = a.run_id AND r.company_id = a.company_id
    LEFT JOIN native_run_finalizations f ON f.run_id = r.id
    WHERE a.cause = ${OWNER_UNVERIFIED_CAUSE} AND a.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}
      -- A malformed receipt's hold names the receipt by its sha256, not by a token.
      AND CASE WHEN a.evidence ->> 'receiptSha256' IS NOT NULL
               THEN ${receiptSha256Sql("r")} IS DISTINCT FROM (a.evidence ->> 'receiptSha256')
               ELSE (r.runner_profile_json -> 'nativeWorkspaceFinalizationOwner' ->> 'token') IS DISTINCT FROM (a.evidence ->> 'ownerToken') END
      AND (r.runner_profile_json ? 'nativeWorkspaceFinalizationOwner' OR f.phase IN ('committed', 'terminal_failure') OR f.phase IS NULL)
      -- R-ATT-3, R-UI-1: an attested hold waits for its coordinator to settle, whoever owns the copy now.
      AND (NOT (a.evidence ? 'attestation') OR f.phase IN ('committed', 'terminal_failure') OR f.phase IS NULL)
    ORDER BY a.created_at
    LIMIT ${limit}`);
  let count = 0;
  for (const row of stale) {
    const updated = await db.issueRecoveryAction.updateMany({
      where: { id: row.id, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } },
      data: {
        status: "resolved",
        outcome: row.final_phase === "committed" ? "copyback_committed" : "stale_owner_receipt",
        resolvedAt: new Date(),
        resolvedByType: "system",
      },
    });
    count += updated.count;
  }
  return count;
}

/** R-ATT-4: open unverified-owner holds carry the copyback instructions (only differing rows are written). */
export async function refreshOwnerHoldInstructions(db: PrismaClient): Promise<number> {
  const updated = await db.issueRecoveryAction.updateMany({
    where: {
      cause: OWNER_UNVERIFIED_CAUSE,
      status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] },
      OR: [{ nextAction: null }, { nextAction: { not: OWNER_UNVERIFIED_NEXT_ACTION } }],
    },
    data: { nextAction: OWNER_UNVERIFIED_NEXT_ACTION },
  });
  return updated.count;
}
