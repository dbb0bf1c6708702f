import { z } from "zod";
import { notFound } from "@copyback/core/errors";
import { companyProcedure } from "~/server/trpc";
import { issueStatusSchema } from "./issue-status-schema";

export const getIssueInput = z.object({ issueId: z.uuid() });

export const getIssueOutput = z.object({
  id: z.uuid(),
  identifier: z.string(),
  title: z.string(),
  description: z.string(),
  status: issueStatusSchema,
  /** Send back to issues.updateStatus: a change made meanwhile makes that call a conflict. */
  statusVersion: z.number().int(),
  assignee: z.object({ id: z.uuid(), name: z.string() }).nullable(),
  createdBy: z.object({ id: z.uuid(), name: z.string() }).nullable(),
  createdAt: z.date(),
  lastActivityAt: z.date(),
});

/** One task's header: title, description, status and assignee. */
export const getIssue = companyProcedure("issues:read")
  .input(getIssueInput)
  .output(getIssueOutput)
  .query(async ({ ctx, input }) => {
    const issue = await ctx.db.issue.findFirst({
      where: { id: input.issueId, companyId: ctx.companyId },
      select: {
        id: true,
        identifier: true,
        title: true,
        description: true,
        status: true,
        statusVersion: true,
        createdAt: true,
        lastActivityAt: true,
        assigneeAgent: { select: { id: true, name: true } },
        createdBy: { select: { id: true, name: true } },
      },
    });
    if (!issue) throw notFound("The issue");
    const { assigneeAgent, ...rest } = issue;
    return { ...rest, assignee: assigneeAgent };
  });
