// How an open recovery action closes (or, once, reopens) outside its cause's own lifecycle: the
// guarded resolution an operator makes, a reconstruction refused after it resolved its hold, and
// the historical unsafe replay's cleanup.
import type { Prisma, TransactionClient } from "@copyback/db/client";
import { OPEN_RECOVERY_ACTION_STATUSES } from "./open-statuses";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "./open-statuses-sql";

/**
 * R-RR-5, R-FO-5: the one write of a guarded resolution (operator/resolve-recovery-action.ts):
 * only an open action moves, with its outcome, the operator and the verified evidence. Returns
 * whether this call resolved it (false: someone else resolved it meanwhile).
 */
export async function recordRecoveryResolution(
  tx: TransactionClient,
  input: {
    actionId: string;
    outcome: string;
    status: "resolved" | "cancelled";
    actor: { type: "user" | "agent" | "local_board" | "system"; id: string | null };
    note: string | null;
    resolutionEvidence: Prisma.InputJsonObject;
  },
): Promise<boolean> {
  const updated = await tx.issueRecoveryAction.updateMany({
    where: { id: input.actionId, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } },
    data: {
      status: input.status,
      outcome: input.outcome,
      resolvedAt: new Date(),
      resolvedByType: input.actor.type,
      resolvedByUserId: input.actor.type === "user" ? input.actor.id : null,
      resolutionNote: input.note,
      resolutionEvidence: input.resolutionEvidence,
    },
  });
  return updated.count === 1;
}

/**
 * R-RC-5: a reconstruction's fresh run was refused at claim or before its provider handoff after
 * its delivery had resolved the hold (outcome `reconstructed`): the hold is open again, exactly as
 * it was, so the task's notice offers a fresh decision. Only that resolution is undone; an action
 * resolved any other way, or a hold whose fingerprint another open action took meanwhile (the
 * partial unique index), stays as it is (false).
 */
export async function reopenAfterReconstructionRefusal(tx: TransactionClient, input: { actionId: string; intentId: string }): Promise<boolean> {
  const reopened = await tx.$executeRaw`
    UPDATE issue_recovery_actions ra
    SET status = 'active'::recovery_status, outcome = NULL, resolved_at = NULL, resolved_by_type = NULL, resolved_by_user_id = NULL,
        resolution_note = NULL, resolution_evidence = NULL, updated_at = now()
    WHERE ra.id = ${input.actionId}::uuid AND ra.status = 'resolved'::recovery_status AND ra.outcome = 'reconstructed'
      AND ra.resolution_evidence ->> 'intentId' = ${input.intentId}
      AND NOT EXISTS (
        SELECT 1 FROM issue_recovery_actions o
        WHERE o.company_id = ra.company_id AND o.issue_id = ra.issue_id AND o.cause = ra.cause AND o.fingerprint = ra.fingerprint
          AND o.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL} AND o.id <> ra.id)`;
  return reopened === 1;
}

/**
 * R-UA-5: the historical unsafe replay clears the run's matching stale unsafe-archive actions (the
 * old repair card an older controller opened) instead of restoring them: resolved by the system,
 * in the replay's transaction. No activity row, no issue timestamp, nobody's inbox.
 */
export async function clearHistoricalUnsafeActions(tx: TransactionClient, input: { companyId: string; runId: string; actionIds: readonly string[] }): Promise<number> {
  if (input.actionIds.length === 0) return 0;
  const cleared = await tx.issueRecoveryAction.updateMany({
    where: { id: { in: [...input.actionIds] }, companyId: input.companyId, runId: input.runId, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } },
    data: { status: "resolved", outcome: "historical_unsafe_export_omitted", resolvedAt: new Date(), resolvedByType: "system" },
  });
  return cleared.count;
}
