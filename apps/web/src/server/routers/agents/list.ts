import { z } from "zod";
import { companyProcedure } from "~/server/trpc";

export const listAgentsOutput = z.array(
  z.object({ id: z.uuid(), name: z.string(), archived: z.boolean() }),
);

/** The company's agents, by name (the assignee filter's options). */
export const listAgents = companyProcedure("issues:read")
  .output(listAgentsOutput)
  .query(async ({ ctx }) => {
    const agents = await ctx.db.agent.findMany({
      where: { companyId: ctx.companyId },
      orderBy: [{ name: "asc" }, { id: "asc" }],
      take: 500,
      select: { id: true, name: true, archivedAt: true },
    });
    return agents.map(({ archivedAt, ...agent }) => ({ ...agent, archived: archivedAt !== null }));
  });
