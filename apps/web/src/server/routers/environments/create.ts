import { z } from "zod";
import { createEnvironment, MAX_ENVIRONMENT_NAME } from "@copyback/core/environments";
import { invalid } from "@copyback/core/errors";
import { environmentsView } from "@copyback/core/providers";
import { daytonaKeyVariable } from "~/env";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

/** A configuration is a few settings; this bounds what one request can make the server parse. */
export const MAX_CONFIG_CHARS = 64 * 1024;

export const createEnvironmentInput = z.object({
  // The name, provider and lease policy are checked by core's decision (one set of rules and
  // messages for the CLI and the console); here only their size is bounded.
  name: z.string().max(MAX_ENVIRONMENT_NAME * 4),
  provider: z.string().max(64),
  /** The configuration as typed (JSON text); empty: `{}`, the provider's defaults. */
  config: z.string().max(MAX_CONFIG_CHARS, "The configuration is at most 64 KiB of JSON."),
  leasePolicy: z.string().max(64).optional(),
});

export const createEnvironmentOutput = z.object({
  id: z.uuid(),
  name: z.string(),
  provider: z.string(),
  pluginId: z.string(),
  defaultLeasePolicy: z.string(),
  /** Daytona: the key variable's NAME and whether this console's process has it set; never its value. */
  credential: z.object({ variable: z.string(), set: z.boolean(), text: z.string() }).nullable(),
});

function parsedConfig(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON.parse's own message: it quotes the text around the error, which may be a pasted key.
    throw invalid("invalid_request", "The configuration is not valid JSON; nothing was created.", { field: "config" });
  }
}

/**
 * The Environments page's "New environment" form: the same core service as `copyback environment
 * create` (the configuration checked by its provider's own schema, a key refused, the name unique
 * in the company, the activity row in the same transaction). Owners and administrators only.
 */
export const createEnvironmentProcedure = companyProcedure("environments:manage")
  .input(createEnvironmentInput)
  .output(createEnvironmentOutput)
  .mutation(async ({ ctx, input }) => {
    const created = await createEnvironment(ctx.db, {
      companyId: ctx.companyId,
      actor: actorOf(ctx.principal),
      name: input.name,
      provider: input.provider,
      config: parsedConfig(input.config),
      ...(input.leasePolicy === undefined ? {} : { leasePolicy: input.leasePolicy }),
    });
    const [view] = environmentsView([created], daytonaKeyVariable);
    return { id: created.id, name: created.name, provider: created.provider, pluginId: created.pluginId, defaultLeasePolicy: created.defaultLeasePolicy, credential: view?.credential ?? null };
  });
