import { z } from "zod";
import { companyProcedure } from "~/server/trpc";

export const listIssuesInput = z.object({ limit: z.number().int().min(1).max(200).default(50) });

export const listIssues = companyProcedure("issues:read")
  .input(listIssuesInput)
  .query(({ ctx, input }) =>
    ctx.db.issue.findMany({
      where: { companyId: ctx.companyId },
      orderBy: { lastActivityAt: "desc" },
      take: input.limit,
      select: {
        id: true,
        identifier: true,
        title: true,
        status: true,
        lastActivityAt: true,
        assigneeAgent: { select: { id: true, name: true } },
      },
    }),
  );
