// Rows for lease tests (company, environment on the fake provider, execution workspace, agent,
// task, runs) built straight with Prisma, and a registry holding the plugins a test names.
import type { PrismaClient } from "@copyback/db";
import type { EnvironmentProvider } from "../../src/providers/types";
import type { LeasePolicy } from "../../src/leases/index";
import { ProviderRegistry } from "../../src/providers/registry";

let counter = 0;

export async function buildLeaseWorld(db: PrismaClient, options: { pluginId?: string; defaultLeasePolicy?: LeasePolicy } = {}) {
  const tag = `${Date.now().toString(36)}${(counter++).toString(36)}`;
  const company = await db.company.create({ data: { name: `Lease Co ${tag}`, issuePrefix: "LEA", issueCounter: 0 } });
  const environment = await db.environment.create({
    data: {
      companyId: company.id,
      name: `Fake ${tag}`,
      provider: "fake",
      pluginId: options.pluginId ?? "builtin.fake",
      defaultLeasePolicy: options.defaultLeasePolicy ?? "ephemeral",
      config: { note: "fixture" },
    },
  });
  const workspace = await db.executionWorkspace.create({ data: { companyId: company.id, name: `ws-${tag}`, hostPath: `/tmp/lease-${tag}` } });
  const agent = await db.agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  const issue = await db.issue.create({
    data: { companyId: company.id, number: 1, identifier: "LEA-1", title: "Task", status: "in_progress", executionWorkspaceId: workspace.id },
  });
  const newRun = async () =>
    (await db.heartbeatRun.create({ data: { companyId: company.id, agentId: agent.id, nativeIssueId: issue.id, status: "running" } })).id;
  const anotherWorkspace = async (name: string) =>
    db.executionWorkspace.create({ data: { companyId: company.id, name: `${name}-${tag}`, hostPath: `/tmp/lease-${name}-${tag}` } });
  const acquireInput = (runId: string, extra: { policy?: LeasePolicy; executionWorkspaceId?: string } = {}) => ({
    companyId: company.id,
    runId,
    issueId: issue.id,
    environmentId: environment.id,
    executionWorkspaceId: extra.executionWorkspaceId ?? workspace.id,
    ...(extra.policy ? { policy: extra.policy } : {}),
  });
  return { company, environment, workspace, agent, issue, newRun, anotherWorkspace, acquireInput };
}

/** A registry serving exactly `plugins`, by plugin id. */
export function registryOf(...plugins: EnvironmentProvider[]): ProviderRegistry {
  const registry = new ProviderRegistry();
  for (const plugin of plugins) registry.register(plugin);
  return registry;
}
