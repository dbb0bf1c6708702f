import { z } from "zod";
import { withTransaction } from "@copyback/db/client";
import { notFound } from "@copyback/core/errors";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";
import { recordActivity } from "../activity/record-activity";
import { boardKeySelect, boardKeySummary, toBoardKeySummary } from "./board-key-summary";

export const revokeApiKeyInput = z.object({ keyId: z.uuid() });

/**
 * Revokes a board API key (api_keys:manage). Effective on the key's next request: principals are
 * resolved per request from the database. Revoking a revoked key changes nothing (one audit row).
 */
export const revokeApiKey = companyProcedure("api_keys:manage")
  .input(revokeApiKeyInput)
  .output(boardKeySummary)
  .mutation(async ({ ctx, input }) => {
    const actor = actorOf(ctx.principal);
    const row = await withTransaction(ctx.db, async (tx) => {
      // Conditional on "not yet revoked", so concurrent revocations write one audit row.
      const revoked = await tx.boardApiKey.updateMany({ where: { id: input.keyId, companyId: ctx.companyId, revokedAt: null }, data: { revokedAt: new Date() } });
      const key = await tx.boardApiKey.findFirst({ where: { id: input.keyId, companyId: ctx.companyId }, select: boardKeySelect });
      if (!key) throw notFound("The API key");
      if (revoked.count === 1) {
        await recordActivity(tx, {
          companyId: ctx.companyId,
          actor,
          action: "board_api_key.revoked",
          entityType: "board_api_key",
          entityId: key.id,
          details: { name: key.name, keyPrefix: key.keyPrefix },
        });
      }
      return key;
    });
    return toBoardKeySummary(row);
  });
