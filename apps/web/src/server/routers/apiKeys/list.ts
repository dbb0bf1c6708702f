import { z } from "zod";
import { companyProcedure } from "~/server/trpc";
import { boardKeySelect, boardKeySummary, toBoardKeySummary } from "./board-key-summary";

export const listApiKeysInput = z.object({ includeRevoked: z.boolean().default(true) });

/** The company's board API keys, newest first (api_keys:manage). */
export const listApiKeys = companyProcedure("api_keys:manage")
  .input(listApiKeysInput)
  .output(z.array(boardKeySummary))
  .query(async ({ ctx, input }) => {
    const rows = await ctx.db.boardApiKey.findMany({
      where: { companyId: ctx.companyId, ...(input.includeRevoked ? {} : { revokedAt: null }) },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: 500,
      select: boardKeySelect,
    });
    const now = new Date();
    return rows.map((row) => toBoardKeySummary(row, now));
  });
