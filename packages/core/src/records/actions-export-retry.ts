// The export-only retry's writes of issue_recovery_actions (R-EX-2, R-EX-3): a part of the one
// recovery-action writer (actions.ts), kept in its own file. The retry is recorded on the
// exhausted hold's evidence under `exportRetry` (request id, repair note, actor, state); the hold
// stays open while the retry runs and resolves, as the system, only when the same run's
// finalization commits.
import { Prisma, type TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import type { DbOrTx } from "./run-log";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "./causes";
import { OPEN_RECOVERY_ACTION_STATUSES } from "./actions/open-statuses";

export const EXPORT_RETRY_REQUEST_SCHEMA = "copyback.export-retry-request.v1";
export const EXPORT_RETRY_KEY = "exportRetry";

export const exportRetryRecord = z.object({
  schema: z.literal(EXPORT_RETRY_REQUEST_SCHEMA),
  requestId: z.uuid(),
  /** resuming: the stop-only intent is recorded and the sandbox is being resumed; readmitted: the run finalizes again; failed: stopped and retained again. */
  state: z.enum(["resuming", "readmitted", "failed"]),
  repairNote: z.string(),
  actor: z.object({ type: z.string(), id: z.string().nullable() }),
  requestedAt: z.string(),
  updatedAt: z.string(),
  failureCode: z.string().optional(),
  failureMessage: z.string().optional(),
});
export type ExportRetryRecord = z.infer<typeof exportRetryRecord>;

/** The retry recorded on a hold's evidence, or null (none, or unreadable: it grants nothing). */
export function readExportRetry(evidence: unknown): ExportRetryRecord | null {
  if (typeof evidence !== "object" || evidence === null) return null;
  const parsed = exportRetryRecord.safeParse((evidence as Record<string, unknown>)[EXPORT_RETRY_KEY]);
  return parsed.success ? parsed.data : null;
}

/** R-EX-2: the operator's request with its repair note, recorded on the hold (which stays open). */
export async function recordExportRetryRequested(
  tx: TransactionClient,
  input: { actionId: string; requestId: string; repairNote: string; actor: { type: string; id: string | null } },
): Promise<void> {
  const now = new Date().toISOString();
  const record: ExportRetryRecord = {
    schema: EXPORT_RETRY_REQUEST_SCHEMA,
    requestId: input.requestId,
    state: "resuming",
    repairNote: input.repairNote,
    actor: input.actor,
    requestedAt: now,
    updatedAt: now,
  };
  // An earlier retry (failed, or exhausted again after its re-admission) is kept in the history.
  await tx.$executeRaw`
    UPDATE issue_recovery_actions
    SET evidence = jsonb_set(
          evidence || jsonb_build_object(${EXPORT_RETRY_KEY}::text, ${JSON.stringify(record)}::jsonb),
          '{exportRetryHistory}',
          COALESCE(evidence -> 'exportRetryHistory', '[]'::jsonb) || CASE WHEN evidence ? ${EXPORT_RETRY_KEY} THEN jsonb_build_array(evidence -> ${EXPORT_RETRY_KEY}) ELSE '[]'::jsonb END),
        updated_at = now()
    WHERE id = ${input.actionId}::uuid`;
}

/** Moves the recorded retry `requestId` to `state` (only that request: a newer one is never overwritten). */
export async function recordExportRetryState(
  db: DbOrTx,
  input: { actionId: string; requestId: string; state: "readmitted" | "failed"; failureCode?: string; failureMessage?: string },
): Promise<boolean> {
  const patch: Record<string, string> = { state: input.state, updatedAt: new Date().toISOString() };
  if (input.failureCode) patch.failureCode = input.failureCode;
  if (input.failureMessage) patch.failureMessage = input.failureMessage.slice(0, 2_000);
  const changed = await db.$executeRaw(Prisma.sql`
    UPDATE issue_recovery_actions
    SET evidence = jsonb_set(evidence, ${`{${EXPORT_RETRY_KEY}}`}::text[], (evidence -> ${EXPORT_RETRY_KEY}) || ${JSON.stringify(patch)}::jsonb), updated_at = now()
    WHERE id = ${input.actionId}::uuid AND evidence -> ${EXPORT_RETRY_KEY} ->> 'requestId' = ${input.requestId}`);
  return changed === 1;
}

/** R-EX-2: the run's committed finalization resolves its export-only-retry hold (system, in the commit transaction). */
export async function resolveExportRetryOnCommit(tx: TransactionClient, input: { companyId: string; runId: string }): Promise<number> {
  const resolved = await tx.issueRecoveryAction.updateMany({
    where: { companyId: input.companyId, runId: input.runId, cause: EXPORT_RETRY_EXHAUSTED_CAUSE, status: { in: [...OPEN_RECOVERY_ACTION_STATUSES] } },
    data: { status: "resolved", outcome: "export_retry_committed", resolvedAt: new Date(), resolvedByType: "system" },
  });
  return resolved.count;
}
