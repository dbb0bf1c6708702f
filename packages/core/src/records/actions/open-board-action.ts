// The one opener of board-owned recovery actions. Opening is idempotent by company, issue, cause
// and fingerprint (the partial unique index issue_recovery_actions_one_open_per_fingerprint): a
// repeated open neither rewrites the row nor spends an attempt (R-OWN-5). Every board-owned action
// waits for a person, so none wakes anyone automatically (R-ORP-4).
import type { DbOrTx } from "../run-log";
import { OPEN_RECOVERY_ACTION_STATUSES } from "./open-statuses";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "./open-statuses-sql";

/** `created`: this call inserted the row; otherwise `actionId` is the open action kept ("" when none is open any more). */
export type OpenOutcome = { actionId: string; created: boolean };

/** Where the action stands: its task, its run and the lease it pins (its files), when it names one. */
export interface BoardActionPlace {
  companyId: string;
  issueId: string;
  runId: string;
  leaseId: string | null;
}

export interface BoardActionOpening {
  cause: string;
  fingerprint: string;
  /** The cause's evidence document, stored as it is. */
  evidence: object;
  nextAction: string;
  /** The attempt budget the action records (R-EX-1: an exhausted export retry's spent budget); none by default. */
  attempts?: { count: number; max: number | null };
  /**
   * R-ATT-4: keeping an open action rewrites its instructions when an older version of the
   * product wrote other words (only the unverified-owner hold asks for it); nothing else is rewritten.
   */
  refreshNextActionOnKeep?: boolean;
}

/** Opens a board-owned recovery action in the caller's transaction, or keeps the open one of the same fingerprint. */
export async function openBoardAction(db: DbOrTx, place: BoardActionPlace, opening: BoardActionOpening): Promise<OpenOutcome> {
  const attemptCount = opening.attempts?.count ?? 0;
  const maxAttempts = opening.attempts?.max ?? null;
  const inserted = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO issue_recovery_actions
      (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, status, evidence, next_action, wake_policy, attempt_count, max_attempts, updated_at)
    VALUES (gen_random_uuid(), ${place.companyId}::uuid, ${place.issueId}::uuid, ${place.runId}::uuid, ${place.leaseId}::uuid,
            ${opening.cause}, ${opening.fingerprint}, 'board', 'active', ${JSON.stringify(opening.evidence)}::jsonb, ${opening.nextAction},
            ${JSON.stringify({ automaticWake: false })}::jsonb, ${attemptCount}::int, ${maxAttempts}::int, now())
    ON CONFLICT (company_id, issue_id, cause, fingerprint) WHERE status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL} DO NOTHING
    RETURNING id`;
  if (inserted[0]) return { actionId: inserted[0].id, created: true };
  const existing = await db.issueRecoveryAction.findFirst({
    where: {
      companyId: place.companyId,
      issueId: place.issueId,
      cause: opening.cause,
      fingerprint: opening.fingerprint,
      status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] },
    },
    select: { id: true, nextAction: true },
  });
  // Resolved between the insert and the read: the next pass opens a fresh one.
  if (!existing) return { actionId: "", created: false };
  if (opening.refreshNextActionOnKeep && existing.nextAction !== opening.nextAction) {
    await db.issueRecoveryAction.update({ where: { id: existing.id }, data: { nextAction: opening.nextAction } });
  }
  return { actionId: existing.id, created: false };
}
