// R-OWN-11, R-ORP-4: a leftover receipt that nobody can prove stopped becomes (or stays) the
// board-owned unverified-owner hold. The run, its accepted result, its descriptor and its lease
// are kept as they are (R-ORP-3); no provider turn, no automatic wake.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { openOwnerUnverifiedAction } from "../records/actions";
import { recordRunEvent } from "../records/run-log";
import type { OwnershipAttempt, OwnershipKey } from "./finalization-owner";
import type { FinalizeOutcome } from "./finalize-outcome";

export async function holdUnverifiedOwner(
  db: PrismaClient,
  key: OwnershipKey,
  taken: Extract<OwnershipAttempt, { kind: "owner_unverified" }>,
): Promise<FinalizeOutcome> {
  const leases = await db.environmentLease.findMany({ where: { runId: key.runId, companyId: key.companyId }, select: { id: true }, orderBy: { createdAt: "asc" } });
  const opened = await withTransaction(db, async (tx) => {
    // Read under the coordinator's row lock: a settled copyback is not re-opened beside it.
    const [coordinator] = await tx.$queryRaw<{ phase: string; result_id: string | null }[]>`
      SELECT phase::text AS phase, result_id FROM native_run_finalizations WHERE run_id = ${key.runId}::uuid FOR UPDATE`;
    const settled = settledCopyback(coordinator?.phase ?? null);
    if (settled) return settled;
    const action = await openOwnerUnverifiedAction(tx, {
      companyId: key.companyId,
      issueId: key.issueId,
      runId: key.runId,
      receipt: taken.receipt,
      reason: taken.reason,
      phase: coordinator?.phase ?? "unknown",
      resultId: coordinator?.result_id ?? null,
      leaseIds: leases.map((lease) => lease.id),
    });
    if (action.created) {
      await recordRunEvent(tx, {
        companyId: key.companyId,
        runId: key.runId,
        level: "warn",
        code: "finalization.owner_unverified",
        message: "An earlier copyback of this run may still be running and cannot be verified from here; an operator must confirm it stopped.",
        payload: { actionId: action.actionId, reason: taken.reason },
      });
    }
    return action;
  });
  if ("kind" in opened) return opened;
  return { kind: "owner_unverified", actionId: opened.actionId, reason: taken.reason };
}

/**
 * R-OWN-11 is about copyback children a controller may have left running before the success
 * barrier. A coordinator that already settled (committed, or a terminal failure its owner recorded
 * with its own hold after its attempt ended) has no such attempt to wait for: a sweep that picked
 * the run before it settled opens no second hold beside the failure's (R-EX-1, R-OWN-5). The
 * leftover receipt stays, so an export-only retry judges it again (R-EX-3).
 */
function settledCopyback(phase: string | null): Extract<FinalizeOutcome, { kind: "already_committed" | "not_finalizable" }> | null {
  if (phase === "committed") return { kind: "already_committed" };
  if (phase === "terminal_failure") return { kind: "not_finalizable", reason: "terminal_failure" };
  return null;
}
