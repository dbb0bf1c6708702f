// `copyback environment create --company REF --name NAME --provider PROVIDER [--config FILE]
// [--lease-policy POLICY]`: a new environment of a company, through the same service as the
// console's "New environment" form (environments/create-environment.ts): the configuration checked
// by its provider's own schema (as `environment configure` checks it), a configuration holding a
// key refused, a duplicate name or an unknown company or provider a clear error; every refusal
// writes nothing, and the row commits with its activity row (`environment.created`, system actor).
import { createEnvironment } from "../../environments/create-environment";
import { decideNewEnvironment } from "../../environments/new-environment";
import { controllerVariable } from "../../providers/daytona/env";
import { environmentView } from "../../providers/environment-view";
import { SYSTEM_ACTOR } from "../../records/record-activity";
import { lookupCompany } from "../company-lookup";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import type { CommandContext, CommandResult } from "../io";
import { readJsonFile } from "../json-file";

export interface CreateOptions {
  company: string;
  name: string;
  provider: string;
  config?: string;
  leasePolicy?: string;
}

export async function environmentCreate(ctx: CommandContext, opts: CreateOptions): Promise<CommandResult> {
  const config = opts.config === undefined ? undefined : await readJsonFile(opts.config, "The configuration file");
  const request = { name: opts.name, provider: opts.provider, config, ...(opts.leasePolicy === undefined ? {} : { leasePolicy: opts.leasePolicy }) };
  // Decided before the database is opened: a bad request is refused even with no database running.
  const decision = decideNewEnvironment(request);
  if (decision.kind === "reject") throw new CliError(EXIT.usage, decision.code, `${decision.message} Nothing written.`, { field: decision.field });
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const company = await lookupCompany(prisma, opts.company);
    const created = await createEnvironment(prisma, { ...request, companyId: company.id, actor: SYSTEM_ACTOR });
    const credential = created.provider === "daytona" ? environmentView({ ...created, provider: "daytona" }, controllerVariable).credential : null;
    const json = { database: source, company: { id: company.id, name: company.name }, environment: created, credential };
    const text = [
      `environment ${created.name} (${created.provider}, ${created.id}) created for ${company.name}: plugin ${created.pluginId}, lease policy ${created.defaultLeasePolicy}, config ${JSON.stringify(created.config)}`,
    ];
    if (credential) text.push(`API key variable ${credential.variable}: ${credential.text} (in this process; the worker's environment is what counts)`);
    text.push(`point an agent at it: copyback agent set-environment --agent AGENT_ID --environment ${created.id} (copyback agent list --company ${company.id} shows the agents)`);
    return { exitCode: EXIT.ok, json, text };
  });
}
