// The copyback-failed hold (R-EX-4, R-UI-2): a copyback that failed for good (a merge conflict, a
// task that moved on before publication, another final failure, or a commit that refused the
// result), opened with the run's failure and its lease's pin.
import type { TransactionClient } from "@copyback/db/client";
import { z } from "zod";
import { COPYBACK_FAILED_CAUSE, copybackFailedNextAction } from "../causes";
import { evidenceReader, leaseIdsOf, pinnedSandboxFields, pinnedSandboxOf } from "./evidence";
import { openBoardAction, type OpenOutcome } from "./open-board-action";

export const COPYBACK_FAILED_EVIDENCE_SCHEMA = "copyback.copyback-failed-evidence.v1";

/** At most this many conflicts are named on the hold (the count is kept); the operation keeps its own list. */
export const MAX_HOLD_CONFLICTS = 20;

/**
 * R-EX-4, R-UI-2: what a copyback-failed hold records: the run, its accepted result, its exact
 * lease and allocation (what the operator recovers files from), what went wrong, whether host
 * writes began, the first conflicts (workspace-relative paths only, R-UA-4) and the pin's outcome in
 * the same transaction. Grants nothing by itself; the resolve service reads the source from it.
 */
export const copybackFailedEvidence = z.object({
  schema: z.literal(COPYBACK_FAILED_EVIDENCE_SCHEMA),
  ...pinnedSandboxFields,
  /** The same lease as a list, so the lease-holds query keeps it out of reuse by evidence too. */
  leaseIds: z.array(z.string()),
  resultId: z.string().nullable(),
  /** result_refused: the files reached the host (the barrier stands) but the commit refused the result. */
  failure: z.enum(["merge_conflict", "binding_changed", "copyback_failed", "result_refused"]),
  /** The run's terminal code (workspace_merge_conflict, finalization_binding_changed, copyback_write_failed, ...). */
  failureCode: z.string(),
  hostWritesStarted: z.boolean(),
  conflictCount: z.number().int().nullable(),
  conflicts: z.array(z.object({ path: z.string(), kind: z.string() })),
  /** The binding check's refusal code (finalization/binding.ts) when the task moved on; else null. */
  bindingReason: z.string().nullable(),
  /** The stop-only intent's outcome in the same transaction (stop-intent.ts). */
  pin: z.enum(["pinned", "already_pinned", "nothing_to_pin"]),
  detectedAt: z.string(),
});
export type CopybackFailedEvidence = z.infer<typeof copybackFailedEvidence>;

export const readCopybackFailedEvidence = evidenceReader(copybackFailedEvidence);

/**
 * R-EX-4, R-UI-2: the board-owned hold of a copyback that failed for good (a merge conflict, a
 * task that moved on before publication, or another final failure, possibly after host writes
 * began), opened in the transaction that fails the run and pins its lease: a crash can leave
 * neither without the other. One per run; no automatic wake; resolved through the guarded resolve
 * service like the other file holds.
 */
export async function openCopybackFailedAction(
  tx: TransactionClient,
  input: Omit<CopybackFailedEvidence, "schema" | "detectedAt" | "leaseIds" | "conflicts"> & {
    companyId: string;
    issueId: string;
    conflicts: readonly { path: string; kind: string }[];
  },
): Promise<OpenOutcome> {
  const evidence: CopybackFailedEvidence = {
    schema: COPYBACK_FAILED_EVIDENCE_SCHEMA,
    ...pinnedSandboxOf(input),
    leaseIds: leaseIdsOf(input.leaseId),
    resultId: input.resultId,
    failure: input.failure,
    failureCode: input.failureCode,
    hostWritesStarted: input.hostWritesStarted,
    conflictCount: input.conflictCount,
    conflicts: input.conflicts.slice(0, MAX_HOLD_CONFLICTS).map((c) => ({ path: c.path, kind: c.kind })),
    bindingReason: input.bindingReason,
    pin: input.pin,
    detectedAt: new Date().toISOString(),
  };
  return openBoardAction(tx, input, {
    cause: COPYBACK_FAILED_CAUSE,
    fingerprint: `${input.runId}:copyback-failed`,
    evidence,
    nextAction: copybackFailedNextAction(input),
  });
}
