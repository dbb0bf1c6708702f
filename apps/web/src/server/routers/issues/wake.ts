import { z } from "zod";
import { wakeAgent } from "@copyback/core/runs";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

export const wakeInput = z.object({
  issueId: z.uuid(),
  /** Assigns this agent first; absent: the task's assignee is woken. */
  agentId: z.uuid().optional(),
});

export const wakeOutput = z.object({
  runId: z.uuid(),
  /** False when the task already had a queued or running run: that run is returned, no second one. */
  created: z.boolean(),
});

/**
 * "Wake agent" on the issue page: queues a native run of the task's agent. Idempotent while a run
 * is queued or running (core's wakeAgent returns it); a done or cancelled task is refused.
 */
export const wakeIssueAgent = companyProcedure("issues:write")
  .input(wakeInput)
  .output(wakeOutput)
  .mutation(({ ctx, input }) =>
    wakeAgent(ctx.db, {
      companyId: ctx.companyId,
      issueId: input.issueId,
      ...(input.agentId ? { agentId: input.agentId } : {}),
      actor: actorOf(ctx.principal),
      reason: "woken from the console",
    }),
  );
