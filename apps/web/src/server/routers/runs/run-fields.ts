// The run vocabulary shared by the run procedures' output schemas.
import { z } from "zod";

export const runStatusSchema = z.enum([
  "queued",
  "running",
  "succeeded",
  "failed",
  "cancelled",
  "timed_out",
]);
export const runtimeModeSchema = z.enum(["native", "legacy"]);

/**
 * Issue 23 (host affinity): why a queued run has not started: its task's workspace is bound to a
 * host that has no live worker (core's deployment/worker-hosts.ts). Null for every other run.
 */
export const hostWaitSchema = z.object({
  code: z.literal("waiting_for_host"),
  hostId: z.string(),
  message: z.string(),
});
