import { z } from "zod";
import { assignAgent } from "@copyback/core/runs";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

export const assignAgentInput = z.object({
  issueId: z.uuid(),
  /** The agent to assign, or null to unassign. */
  agentId: z.uuid().nullable(),
});

export const assignAgentOutput = z.object({ assignee: z.object({ id: z.uuid(), name: z.string() }).nullable() });

/**
 * Assigns an agent of the company to the task, or unassigns it (issues:write: "assign and wake
 * agents"). The assignment and its activity row commit together in core's assignAgent; another
 * company's agent or task reads as not found.
 */
export const assignIssueAgent = companyProcedure("issues:write")
  .input(assignAgentInput)
  .output(assignAgentOutput)
  .mutation(async ({ ctx, input }) => {
    await assignAgent(ctx.db, {
      companyId: ctx.companyId,
      issueId: input.issueId,
      agentId: input.agentId,
      actor: actorOf(ctx.principal),
    });
    const issue = await ctx.db.issue.findFirstOrThrow({
      where: { id: input.issueId, companyId: ctx.companyId },
      select: { assigneeAgent: { select: { id: true, name: true } } },
    });
    return { assignee: issue.assigneeAgent };
  });
