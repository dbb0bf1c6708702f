// The stopped-execution receipt (R-LG-1, R-RR-5): the Stop's acknowledgement that the run's agent
// execution is stopped, recorded on the run by the Stop path in the transaction that ends it
// `cancelled` (records/run-stop-records.ts, key `stopAcknowledgement`, schema
// copyback.run-stop-acknowledgement.v1). Read here on its own, with only the fields the late
// legacy report and the resolve service compare, so that reading it never depends on the Stop
// path's other records; unreadable JSON grants nothing.
import { z } from "zod";

export const STOPPED_EXECUTION_RECEIPT_KEY = "stopAcknowledgement";
export const STOPPED_EXECUTION_RECEIPT_SCHEMA = "copyback.run-stop-acknowledgement.v1";

const stoppedExecutionReceipt = z.object({
  schema: z.literal(STOPPED_EXECUTION_RECEIPT_SCHEMA),
  requestId: z.uuid(),
  acknowledgedAt: z.string(),
  /** The lease the run held when it was stopped (null: none was acquired). */
  leaseId: z.uuid().nullable(),
});
export type StoppedExecutionReceipt = z.infer<typeof stoppedExecutionReceipt>;

export function readStoppedExecutionReceipt(runnerProfile: unknown): StoppedExecutionReceipt | null {
  if (runnerProfile === null || typeof runnerProfile !== "object" || Array.isArray(runnerProfile)) return null;
  const parsed = stoppedExecutionReceipt.safeParse((runnerProfile as Record<string, unknown>)[STOPPED_EXECUTION_RECEIPT_KEY]);
  return parsed.success ? parsed.data : null;
}
