// `copyback environment list [--company ID|PREFIX|NAME]`: the environments of every company (or one), with
// their provider, plugin, default lease policy and stored configuration — what an operator needs
// to find the id `environment configure` takes. Reads only.
//
// A daytona environment's configuration is shown as its provider's zod schema reads it (defaults
// applied; an invalid one says which path), with the NAME of its key variable and whether it is
// set in this process (the key itself is never read into the output), and the last time a dispatch
// was refused for its key (issue 21: a missing or rejected key, records/credential-refusals.ts).
import { controllerVariable } from "../../providers/daytona/env";
import { environmentView, keyLikeFields, type EnvironmentView } from "../../providers/environment-view";
import type { ProviderKind } from "../../providers/types";
import { lastCredentialRefusals, type CredentialRefusal } from "../../records/credential-refusals";
import { lookupCompany } from "../company-lookup";
import { withCliDatabase } from "../database";
import { EXIT } from "../exit-codes";
import { table } from "../format";
import type { CommandContext, CommandResult } from "../io";

export async function environmentList(ctx: CommandContext, opts: { company?: string }): Promise<CommandResult> {
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const company = opts.company === undefined ? null : await lookupCompany(prisma, opts.company);
    const rows = await prisma.environment.findMany({
      where: company === null ? {} : { companyId: company.id },
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
    const refusals = await lastCredentialRefusals(prisma, rows.map((row) => row.id));
    const environments = rows.map((row) => ({
      ...daytonaFacts(row, refusals.get(row.id)),
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
      environments.map((e) => [e.id, e.companyName, e.name, e.provider, e.pluginId, e.defaultLeasePolicy, JSON.stringify(e.daytona?.configuration ?? e.config)]),
    );
    for (const e of environments) {
      if (!e.daytona) continue;
      if (e.daytona.credential) text.push(`${e.name}: API key variable ${e.daytona.credential.variable} ${e.daytona.credential.text} (in this process)`);
      else text.push(`${e.name}: ${e.daytona.configuration.kind === "daytona" ? "" : (e.daytona.configuration as { text: string }).text}`);
      if (e.daytona.lastCredentialRefusal) {
        const r = e.daytona.lastCredentialRefusal;
        text.push(`${e.name}: last dispatch refused ${r.at} (${r.code}${r.variable ? `, ${r.variable}` : ""}): run ${r.runId}`);
      }
    }
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

type ListedRow = { id: string; name: string; provider: string; pluginId: string; defaultLeasePolicy: string; config: unknown };

/** A daytona environment's validated view, key state and last refusal; null for other providers. */
function daytonaFacts(row: ListedRow, refusal: CredentialRefusal | undefined): { daytona: { configuration: EnvironmentView["configuration"]; credential: EnvironmentView["credential"]; lastCredentialRefusal: (Omit<CredentialRefusal, "at"> & { at: string }) | null } | null } {
  if (row.provider !== "daytona") return { daytona: null };
  const view = environmentView({ ...row, provider: row.provider as ProviderKind }, controllerVariable);
  return {
    daytona: {
      configuration: view.configuration,
      credential: view.credential,
      lastCredentialRefusal: refusal ? { ...refusal, at: refusal.at.toISOString() } : null,
    },
  };
}
