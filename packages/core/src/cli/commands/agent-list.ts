// `copyback agent list [--company REF]`: the agents of every company (or one) with the environment
// each runs in — what an operator needs to find the id `agent set-environment` takes, and whether
// an agent has an environment at all (a run of one without fails `agent_without_environment`).
// Reads only.
import { lookupCompany } from "../company-lookup";
import { withCliDatabase } from "../database";
import { EXIT } from "../exit-codes";
import { table } from "../format";
import type { CommandContext, CommandResult } from "../io";

export async function agentList(ctx: CommandContext, opts: { company?: string }): Promise<CommandResult> {
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const company = opts.company === undefined ? null : await lookupCompany(prisma, opts.company);
    const rows = await prisma.agent.findMany({
      where: company === null ? {} : { companyId: company.id },
      orderBy: [{ companyId: "asc" }, { name: "asc" }, { id: "asc" }],
      select: {
        id: true,
        name: true,
        archivedAt: true,
        company: { select: { id: true, name: true } },
        environment: { select: { id: true, name: true, provider: true } },
      },
    });
    const agents = rows.map((row) => ({
      id: row.id,
      name: row.name,
      companyId: row.company.id,
      companyName: row.company.name,
      archived: row.archivedAt !== null,
      environment: row.environment,
    }));
    const json = { database: source, agents };
    if (agents.length === 0) return { exitCode: EXIT.ok, json, text: ["no agents"] };
    const text = table(
      ["agent", "company", "name", "environment"],
      agents.map((a) => [
        a.id,
        a.companyName,
        a.archived ? `${a.name} (archived)` : a.name,
        a.environment ? `${a.environment.name} (${a.environment.provider}, ${a.environment.id})` : "none: its runs cannot start",
      ]),
    );
    return { exitCode: EXIT.ok, json, text };
  });
}
