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
 * Issue 23 (host affinity): what a run says about its task's workspace's host (core's
 * deployment/worker-hosts.ts): a queued run waits for a host that has no live, non-draining worker
 * (`waiting_for_host`); a running run's host has no live worker at all (`host_worker_gone`: the
 * worker stopped during the run, its work is kept there). Null for every other run.
 */
export const hostWaitSchema = z.object({
  code: z.enum(["waiting_for_host", "host_worker_gone"]),
  hostId: z.string(),
  message: z.string(),
});
