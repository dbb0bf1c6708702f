// `copyback environment list [--company ID]`: the environments of every company (or one), with
// their provider, plugin, default lease policy and stored configuration — what an operator needs
// to find the id `environment configure` takes. Reads only.
import { keyLikeFields } from "../../providers/environment-view";
import { withCliDatabase } from "../database";
import { EXIT } from "../exit-codes";
import { table } from "../format";
import type { CommandContext, CommandResult } from "../io";

export async function environmentList(ctx: CommandContext, opts: { companyId?: string }): Promise<CommandResult> {
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const rows = await prisma.environment.findMany({
      where: opts.companyId === undefined ? {} : { companyId: opts.companyId },
      orderBy: [{ companyId: "asc" }, { name: "asc" }],
      select: {
        id: true,
        name: true,
        provider: true,
        pluginId: true,
        defaultLeasePolicy: true,
        config: true,
        updatedAt: true,
        company: { select: { id: true, name: true } },
      },
    });
    const environments = rows.map((row) => ({
      id: row.id,
      companyId: row.company.id,
      companyName: row.company.name,
      name: row.name,
      provider: row.provider,
      pluginId: row.pluginId,
      defaultLeasePolicy: row.defaultLeasePolicy,
      config: shownConfig(row.config),
      updatedAt: row.updatedAt.toISOString(),
    }));
    const json = { database: source, environments };
    if (environments.length === 0) return { exitCode: EXIT.ok, json, text: ["no environments"] };
    const text = table(
      ["environment", "company", "name", "provider", "plugin", "lease policy", "config"],
      environments.map((e) => [e.id, e.companyName, e.name, e.provider, e.pluginId, e.defaultLeasePolicy, JSON.stringify(e.config)]),
    );
    return { exitCode: EXIT.ok, json, text };
  });
}

/**
 * The stored configuration, unless it holds a key-like field anywhere (a key pasted into a row that
 * never went through `configure`): then only where, never the value (the console's rule,
 * providers/environment-view.ts).
 */
function shownConfig(config: unknown): unknown {
  const secrets = keyLikeFields(config);
  return secrets.length === 0 ? config : { hidden: `the configuration holds key-like field(s) ${secrets.join(", ")}; not shown` };
}
