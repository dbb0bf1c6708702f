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
  const coordinator = await db.nativeRunFinalization.findUnique({ where: { runId: key.runId }, select: { phase: true, resultId: true } });
  const leases = await db.environmentLease.findMany({ where: { runId: key.runId, companyId: key.companyId }, select: { id: true }, orderBy: { createdAt: "asc" } });
  const opened = await withTransaction(db, async (tx) => {
    const action = await openOwnerUnverifiedAction(tx, {
      companyId: key.companyId,
      issueId: key.issueId,
      runId: key.runId,
      receipt: taken.receipt,
      reason: taken.reason,
      phase: coordinator?.phase ?? "unknown",
      resultId: coordinator?.resultId ?? null,
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
  return { kind: "owner_unverified", actionId: opened.actionId, reason: taken.reason };
}
