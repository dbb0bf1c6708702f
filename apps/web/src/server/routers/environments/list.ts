import { z } from "zod";
import { environmentsView } from "@copyback/core/providers";
import { daytonaKeyVariable } from "~/env";
import { companyProcedure } from "~/server/trpc";

const daytonaConfiguration = z.object({
  kind: z.literal("daytona"),
  apiUrl: z.string(),
  target: z.string().nullable(),
  source: z.union([z.object({ kind: z.enum(["snapshot", "image"]), name: z.string() }), z.object({ kind: z.literal("default") })]),
  resources: z.object({ cpu: z.number().nullable(), memoryGiB: z.number().nullable(), diskGiB: z.number().nullable() }).nullable(),
  labels: z.array(z.object({ key: z.string(), value: z.string() })),
  autoStopMinutes: z.number().nullable(),
  autoArchiveMinutes: z.number().nullable(),
  autoDeleteMinutes: z.number().nullable(),
  apiKeyEnv: z.string(),
});

export const environmentItem = z.object({
  id: z.uuid(),
  name: z.string(),
  provider: z.string(),
  pluginId: z.string(),
  defaultLeasePolicy: z.string(),
  configuration: z.discriminatedUnion("kind", [
    daytonaConfiguration,
    z.object({ kind: z.literal("settings"), entries: z.array(z.object({ key: z.string(), value: z.string() })) }),
    z.object({ kind: z.literal("withheld"), text: z.string(), fields: z.array(z.string()) }),
    z.object({ kind: z.literal("invalid"), text: z.string() }),
    z.object({ kind: z.literal("unsupported"), text: z.string() }),
  ]),
  credential: z.object({ variable: z.string(), set: z.boolean(), text: z.string() }).nullable(),
});

export const listEnvironmentsOutput = z.object({ items: z.array(environmentItem) });

/**
 * The company's environments, read-only, for runtime managers (the same people as the Retained
 * sandboxes page): provider, plugin, default lease policy, the configuration as its provider's
 * schema validates it (core's environmentsView: a key-like field withholds the whole config), and
 * for Daytona whether the key's variable is set in THIS process's environment. The worker reads
 * its own environment when a run starts; the page says so. No key value is ever read into the answer.
 */
export const listEnvironmentsProcedure = companyProcedure("runtime:manage")
  .output(listEnvironmentsOutput)
  .query(async ({ ctx }) => {
    const rows = await ctx.db.environment.findMany({
      where: { companyId: ctx.companyId },
      orderBy: [{ name: "asc" }, { id: "asc" }],
      select: { id: true, name: true, provider: true, pluginId: true, defaultLeasePolicy: true, config: true },
    });
    return { items: environmentsView(rows, daytonaKeyVariable) };
  });
