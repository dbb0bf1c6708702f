import { z } from "zod";
import { daytonaDashboardLink, environmentsView } from "@copyback/core/providers";
import { lastCredentialRefusals } from "@copyback/core/records";
import { daytonaKeyVariable } from "~/env";
import { inspectSandbox } from "~/server/environments/inspect-sandbox";
import { instanceProviders } from "~/server/recovery/export-retry";
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
  /** Issue 21: the last dispatch refused for this environment's key (missing or rejected), or null. */
  lastCredentialRefusal: z.object({ runId: z.uuid(), code: z.string(), variable: z.string().nullable(), message: z.string(), at: z.date() }).nullable(),
  /**
   * Daytona: the environment's newest sandbox that still exists (a lease not destroyed), as the
   * lease records it: copyback's status, Daytona's sandbox id and the dashboard link (null on a
   * loopback API). Not a live read of Daytona: the Retained sandboxes page and `copyback sandboxes`
   * say what the provider said at the stop.
   */
  sandbox: z
    .object({
      leaseId: z.uuid(),
      status: z.string(),
      sandboxId: z.string(),
      dashboardUrl: z.string().nullable(),
      acquiredAt: z.date(),
      /** Read live through the lease's plugin (inspect-sandbox.ts): Daytona's state and auto-delete policy. */
      live: z.discriminatedUnion("kind", [
        z.object({ kind: z.literal("read"), state: z.string(), providerState: z.string().nullable(), autoDelete: z.string().nullable(), autoDeleteMinutes: z.number().nullable() }),
        z.object({ kind: z.literal("not_read"), code: z.string(), message: z.string() }),
      ]),
    })
    .nullable(),
});

export const listEnvironmentsOutput = z.object({
  items: z.array(environmentItem),
  /** The company's agents that are not archived, with the environment each runs in (issue 21 part 5: the page's chooser). */
  agents: z.array(z.object({ id: z.uuid(), name: z.string(), environmentId: z.uuid().nullable() })),
});

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
    const agents = await ctx.db.agent.findMany({
      where: { companyId: ctx.companyId, archivedAt: null },
      orderBy: [{ name: "asc" }, { id: "asc" }],
      take: 500,
      select: { id: true, name: true, environmentId: true },
    });
    const ids = rows.map((r) => r.id);
    const refusals = await lastCredentialRefusals(ctx.db, ids, ctx.companyId);
    const daytonaIds = rows.filter((r) => r.provider === "daytona").map((r) => r.id);
    const leases = daytonaIds.length === 0 ? [] : await ctx.db.environmentLease.findMany({
      where: { companyId: ctx.companyId, environmentId: { in: daytonaIds }, status: { not: "destroyed" }, providerLeaseId: { not: null } },
      orderBy: [{ acquiredAt: "desc" }, { id: "asc" }],
      distinct: ["environmentId"],
      select: { id: true, environmentId: true, status: true, providerLeaseId: true, acquiredAt: true, pluginId: true, provider: true },
    });
    const newest = new Map(leases.map((l) => [l.environmentId, l]));
    const readings = new Map(
      await Promise.all(leases.map(async (l) => [l.id, await inspectSandbox(instanceProviders, { id: l.id, pluginId: l.pluginId, provider: l.provider, providerLeaseId: l.providerLeaseId! })] as const)),
    );
    return {
      agents,
      items: environmentsView(rows, daytonaKeyVariable).map((view) => {
        const refusal = refusals.get(view.id);
        const lease = newest.get(view.id);
        const link = lease ? daytonaDashboardLink(lease.providerLeaseId) : null;
        return {
          ...view,
          lastCredentialRefusal: refusal ? { runId: refusal.runId, code: refusal.code, variable: refusal.variable, message: refusal.message, at: refusal.at } : null,
          sandbox: lease && link ? { leaseId: lease.id, status: lease.status, sandboxId: link.sandboxId, dashboardUrl: link.url, acquiredAt: lease.acquiredAt, live: readings.get(lease.id)! } : null,
        };
      }),
    };
  });
