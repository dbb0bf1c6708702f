// R-RR-7 (and R-ORP-3): ordinary work never clears an open recovery action. A new message, Retry,
// `/new` and Wake all read the task's open actions here, under the task's row lock, and either
// refuse (a new run: wake, Retry) or defer (a saved message, a new conversation generation: kept,
// but no agent sees them until the hold clears). Nothing here writes a recovery action: they are
// resolved only through their own recovery paths (records/actions.ts is their one writer).
import { conflict, type DomainError } from "../errors";
import {
  COPYBACK_FAILED_CAUSE,
  EXPORT_LIMIT_CAUSE,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
  FILE_RECOVERY_CAUSE,
  LEGACY_COPYBACK_REPAIR_CAUSE,
  OWNER_UNVERIFIED_CAUSE,
  PACK_VERIFICATION_UNAVAILABLE_CAUSE,
} from "../records/causes";
import type { DbOrTx } from "../records/run-log";
import { OPEN_RECOVERY_ACTION_STATUSES } from "../records/actions";

export interface OpenHold {
  id: string;
  cause: string;
  runId: string | null;
  leaseId: string | null;
}

/** The task's oldest open recovery action (any cause, any owner), or null. */
export function findOpenHold(db: DbOrTx, companyId: string, issueId: string): Promise<OpenHold | null> {
  return db.issueRecoveryAction.findFirst({
    where: { companyId, issueId, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    select: { id: true, cause: true, runId: true, leaseId: true },
  });
}

const REASONS: Readonly<Record<string, string>> = {
  [FILE_RECOVERY_CAUSE]: "an earlier run ended before its result and its files are kept in its sandbox until a board operator records their recovery",
  [LEGACY_COPYBACK_REPAIR_CAUSE]: "an earlier run could not copy its required files back and its sandbox is kept until a board operator records the repair",
  [OWNER_UNVERIFIED_CAUSE]: "an earlier copyback's controller could not be proven stopped and an operator must confirm it before the saved result is copied back",
  [EXPORT_RETRY_EXHAUSTED_CAUSE]: "copying an earlier run's files back failed three times and its sandbox is kept for the export-only retry",
  [EXPORT_LIMIT_CAUSE]: "an earlier run's files exceeded the export limits and its sandbox is kept for an operator",
  [COPYBACK_FAILED_CAUSE]: "copying an earlier run's files back failed for good and its sandbox is kept until a board operator records their recovery",
  [PACK_VERIFICATION_UNAVAILABLE_CAUSE]: "a run of this task is held before its first turn because its agent pack could not be verified in its sandbox, until a runtime manager asks for it to be verified again",
};

/** Why the hold stops ordinary work, in words for the task's notice (pure). */
export function holdReason(cause: string): string {
  return REASONS[cause] ?? "an earlier run's saved work is held for recovery";
}

/** The refusal of a new run while `hold` is open: 409 recovery_hold_open with the reason. */
export function holdRefusal(hold: OpenHold, what: string): DomainError {
  return conflict(
    "recovery_hold_open",
    `This task's saved work is waiting for recovery (see the task's notice): ${holdReason(hold.cause)}. ${what} until it is resolved; the recovery action stays as it is.`,
    { actionId: hold.id, cause: hold.cause, runId: hold.runId, leaseId: hold.leaseId },
  );
}
