import { z } from "zod";
import { withTransaction } from "@copyback/db/client";
import { notFound } from "@copyback/core/errors";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";
import { recordActivity } from "../activity/record-activity";
import { agentKeySelect, agentKeySummary, toAgentKeySummary } from "./agent-key-summary";

export const revokeAgentKeyInput = z.object({ keyId: z.uuid() });

/** Revokes an agent API key (api_keys:manage); effective on the key's next request. Idempotent. */
export const revokeAgentKey = companyProcedure("api_keys:manage")
  .input(revokeAgentKeyInput)
  .output(agentKeySummary)
  .mutation(async ({ ctx, input }) => {
    const actor = actorOf(ctx.principal);
    const row = await withTransaction(ctx.db, async (tx) => {
      // Conditional on "not yet revoked", so concurrent revocations write one audit row.
      const revoked = await tx.agentApiKey.updateMany({ where: { id: input.keyId, companyId: ctx.companyId, revokedAt: null }, data: { revokedAt: new Date() } });
      const key = await tx.agentApiKey.findFirst({ where: { id: input.keyId, companyId: ctx.companyId }, select: agentKeySelect });
      if (!key) throw notFound("The API key");
      if (revoked.count === 1) {
        await recordActivity(tx, {
          companyId: ctx.companyId,
          actor,
          action: "agent_api_key.revoked",
          entityType: "agent_api_key",
          entityId: key.id,
          details: { name: key.name, keyPrefix: key.keyPrefix, agentId: key.agent.id },
        });
      }
      return key;
    });
    return toAgentKeySummary(row);
  });
