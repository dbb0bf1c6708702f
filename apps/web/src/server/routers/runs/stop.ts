import { z } from "zod";
import { stopRun } from "@copyback/core/runs";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

export const stopRunInput = z.object({ runId: z.uuid() });

export const stopRunOutput = z.object({
  /** cancelled: it was queued; stop_requested: the worker stops the agent; finalizing: its accepted result is still copied back. */
  kind: z.enum(["cancelled", "stop_requested", "finalizing"]),
  runId: z.uuid(),
  requestId: z.uuid(),
});

/**
 * The task's Stop button (R-RC-7): run-only cancellation through the same core service as
 * POST /api/runs/:id/stop. A finished run answers CONFLICT run_not_active and nothing changes.
 */
export const stopRunProcedure = companyProcedure("issues:write")
  .input(stopRunInput)
  .output(stopRunOutput)
  .mutation(async ({ ctx, input }) => {
    const outcome = await stopRun(ctx.db, { companyId: ctx.companyId, runId: input.runId, actor: actorOf(ctx.principal) });
    return { kind: outcome.kind, runId: outcome.runId, requestId: outcome.requestId };
  });
