import { z } from "zod";
import { withTransaction } from "@copyback/db/client";
import { invalid, notFound } from "@copyback/core/errors";
import { companyProcedure } from "~/server/trpc";
import { generateApiKey } from "~/server/auth/api-keys";
import { actorOf } from "../activity/actor";
import { recordActivity } from "../activity/record-activity";
import { expiresAtFrom, expiresInDaysInput, keyNameInput } from "../apiKeys/key-lifetime";
import { assertNotMintedByKey } from "../apiKeys/key-owner";
import { agentKeySelect, agentKeySummary, toAgentKeySummary } from "./agent-key-summary";

export const createAgentKeyInput = z.object({ agentId: z.uuid(), name: keyNameInput, expiresInDays: expiresInDaysInput });

export const createAgentKeyOutput = z.object({
  key: agentKeySummary,
  /** The key itself. Returned by this call only: it is stored as a sha256 and can never be shown again. */
  secret: z.string(),
});

/** Creates an API key for one of the company's agents (api_keys:manage); the secret is returned once. */
export const createAgentKey = companyProcedure("api_keys:manage")
  .input(createAgentKeyInput)
  .output(createAgentKeyOutput)
  .mutation(async ({ ctx, input }) => {
    assertNotMintedByKey(ctx.principal);
    const actor = actorOf(ctx.principal);
    const generated = generateApiKey("agent");
    const now = new Date();
    const row = await withTransaction(ctx.db, async (tx) => {
      const agent = await tx.agent.findFirst({ where: { id: input.agentId, companyId: ctx.companyId }, select: { id: true, archivedAt: true } });
      if (!agent) throw notFound("The agent");
      if (agent.archivedAt) throw invalid("agent_archived", "This agent is archived; archived agents cannot get keys.");
      const created = await tx.agentApiKey.create({
        data: {
          companyId: ctx.companyId,
          agentId: agent.id,
          name: input.name,
          keyPrefix: generated.displayPrefix,
          keyHash: generated.hash,
          expiresAt: expiresAtFrom(input.expiresInDays, now),
        },
        select: agentKeySelect,
      });
      await recordActivity(tx, {
        companyId: ctx.companyId,
        actor,
        action: "agent_api_key.created",
        entityType: "agent_api_key",
        entityId: created.id,
        details: { name: created.name, keyPrefix: created.keyPrefix, agentId: agent.id },
      });
      return created;
    });
    return { key: toAgentKeySummary(row, now), secret: generated.secret };
  });
