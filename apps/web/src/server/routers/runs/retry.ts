import { z } from "zod";
import { retryRun } from "@copyback/core/runs";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

export const retryRunInput = z.object({ runId: z.uuid() });

export const retryRunOutput = z.object({ runId: z.uuid(), created: z.boolean(), predecessorRunId: z.uuid() });

/**
 * Retry on a failed run (R-RR-7): an ordinary wake of the task's agent that names the run it
 * follows. Refused with recovery_hold_open (and the reason) while any recovery action of the task
 * is open, with run_superseded for an older run and run_not_retryable for one that did not fail.
 */
export const retryRunProcedure = companyProcedure("issues:write")
  .input(retryRunInput)
  .output(retryRunOutput)
  .mutation(({ ctx, input }) => retryRun(ctx.db, { companyId: ctx.companyId, runId: input.runId, actor: actorOf(ctx.principal) }));
