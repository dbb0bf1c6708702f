import { z } from "zod";
import { withTransaction } from "@copyback/db/client";
import { companyProcedure } from "~/server/trpc";
import { generateApiKey } from "~/server/auth/api-keys";
import { actorOf } from "../activity/actor";
import { recordActivity } from "../activity/record-activity";
import { boardKeySelect, boardKeySummary, toBoardKeySummary } from "./board-key-summary";
import { expiresAtFrom, expiresInDaysInput, keyNameInput } from "./key-lifetime";
import { keyOwnerFor } from "./key-owner";

export const createApiKeyInput = z.object({
  name: keyNameInput,
  expiresInDays: expiresInDaysInput,
  /** Whose role the key carries: a signed-in user may only name themself; the local board must name an active member. */
  userId: z.uuid().optional(),
});

export const createApiKeyOutput = z.object({
  key: boardKeySummary,
  /** The key itself. Returned by this call only: it is stored as a sha256 and can never be shown again. */
  secret: z.string(),
});

/** Creates a board API key for scripts and E2E suites (api_keys:manage); the secret is returned once. */
export const createApiKey = companyProcedure("api_keys:manage")
  .input(createApiKeyInput)
  .output(createApiKeyOutput)
  .mutation(async ({ ctx, input }) => {
    const actor = actorOf(ctx.principal);
    const generated = generateApiKey("board");
    const now = new Date();
    const row = await withTransaction(ctx.db, async (tx) => {
      const userId = await keyOwnerFor(tx, ctx.principal, ctx.companyId, input.userId);
      const created = await tx.boardApiKey.create({
        data: {
          companyId: ctx.companyId,
          userId,
          name: input.name,
          keyPrefix: generated.displayPrefix,
          keyHash: generated.hash,
          expiresAt: expiresAtFrom(input.expiresInDays, now),
        },
        select: boardKeySelect,
      });
      await recordActivity(tx, {
        companyId: ctx.companyId,
        actor,
        action: "board_api_key.created",
        entityType: "board_api_key",
        entityId: created.id,
        details: { name: created.name, keyPrefix: created.keyPrefix, userId },
      });
      return created;
    });
    return { key: toBoardKeySummary(row, now), secret: generated.secret };
  });
