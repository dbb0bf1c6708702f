import { z } from "zod";
import { setAgentEnvironment } from "@copyback/core/environments";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

export const setAgentEnvironmentInput = z.object({ agentId: z.uuid(), environmentId: z.uuid() });

export const setAgentEnvironmentOutput = z.object({
  agent: z.object({ id: z.uuid(), name: z.string() }),
  environment: z.object({ id: z.uuid(), name: z.string(), provider: z.string() }),
  previousEnvironmentId: z.uuid().nullable(),
  changed: z.boolean(),
});

/**
 * The Environments page's chooser: the environment an agent's runs are dispatched in, through the
 * same core service as `copyback agent set-environment`, scoped to the company (another company's
 * agent or environment is not found). Owners and administrators only.
 */
export const setAgentEnvironmentProcedure = companyProcedure("environments:manage")
  .input(setAgentEnvironmentInput)
  .output(setAgentEnvironmentOutput)
  .mutation(async ({ ctx, input }) => {
    const result = await setAgentEnvironment(ctx.db, { agentId: input.agentId, environmentId: input.environmentId, companyId: ctx.companyId, actor: actorOf(ctx.principal) });
    return { agent: { id: result.agent.id, name: result.agent.name }, environment: result.environment, previousEnvironmentId: result.previousEnvironmentId, changed: result.changed };
  });
