// Each finalization attempt of a run (the run page and Recovery details): one
// row per `workspace_finalize` operation, numbered by the attempt its metadata recorded, with the
// code it failed with and when. Pure.
import { z } from "zod";

export const finalizationAttemptSchema = z.object({
  /** The coordinator attempt (R-EX-1 counts three); the operation's position when it did not record one. */
  attempt: z.number().int(),
  status: z.enum(["running", "succeeded", "failed"]),
  failureCode: z.string().nullable(),
  startedAt: z.date(),
  finishedAt: z.date().nullable(),
  /** The failure spent the retry budget (native_workspace_sync_out_retry_exhausted followed). */
  exhausted: z.boolean(),
  /** The export was omitted (an unsafe archive, or a historical unsafe replay). */
  omitted: z.boolean(),
});
export type FinalizationAttempt = z.infer<typeof finalizationAttemptSchema>;

interface FinalizeOperation {
  phase: string;
  status: string;
  errorCode: string | null;
  startedAt: Date;
  finishedAt: Date | null;
  metadata: unknown;
}

const STATUSES = new Set(["running", "succeeded", "failed"]);

export function finalizationAttemptsOf(operations: readonly FinalizeOperation[]): FinalizationAttempt[] {
  return operations
    .filter((op) => op.phase === "workspace_finalize" && STATUSES.has(op.status))
    .map((op, index) => {
      const meta = typeof op.metadata === "object" && op.metadata !== null ? (op.metadata as Record<string, unknown>) : {};
      const attempt = typeof meta.attempt === "number" && Number.isSafeInteger(meta.attempt) ? meta.attempt : index + 1;
      return {
        attempt,
        status: op.status as FinalizationAttempt["status"],
        failureCode: op.status === "failed" ? op.errorCode : null,
        startedAt: op.startedAt,
        finishedAt: op.finishedAt,
        exhausted: meta.exhausted === true,
        omitted: meta.omitted === true,
      };
    });
}
