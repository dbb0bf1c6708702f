import { z } from "zod";
import { companyProcedure } from "~/server/trpc";
import { agentKeySelect, agentKeySummary, toAgentKeySummary } from "./agent-key-summary";

export const listAgentKeysInput = z.object({ includeRevoked: z.boolean().default(true), agentId: z.uuid().optional() });

/** The company's agent API keys, newest first (api_keys:manage). */
export const listAgentKeys = companyProcedure("api_keys:manage")
  .input(listAgentKeysInput)
  .output(z.array(agentKeySummary))
  .query(async ({ ctx, input }) => {
    const rows = await ctx.db.agentApiKey.findMany({
      where: {
        companyId: ctx.companyId,
        // Run-scoped keys (minted per run by the worker, revoked with it) are not managed here.
        runId: null,
        ...(input.agentId ? { agentId: input.agentId } : {}),
        ...(input.includeRevoked ? {} : { revokedAt: null }),
      },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: 500,
      select: agentKeySelect,
    });
    const now = new Date();
    return rows.map((row) => toAgentKeySummary(row, now));
  });
