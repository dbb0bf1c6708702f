// The `environment` commands: the sandbox environments of the instance database. Loaded on use,
// like the recovery commands: the database client is not needed by the file-level commands.
import type { Command } from "commander";
import { uuid } from "../arguments";
import type { Runner } from "../runner";

export function registerEnvironmentCommands(program: Command, run: Runner): void {
  const environment = program
    .command("environment")
    .description("the sandbox environments of the instance database: list them, change their configuration (rehearsal faults) and lease policy");
  environment
    .command("list")
    .description("every environment with its id, company, provider, plugin, lease policy and configuration")
    .option("--company <id>", "only this company's", uuid)
    .action(
      run("environment list", async (ctx, opts: { company?: string }) =>
        (await import("./environment-list")).environmentList(ctx, { companyId: opts.company }),
      ),
    );
  environment
    .command("configure")
    .argument("<environment-id>", "the environment (copyback environment list)", uuid)
    .description(
      "change an environment's configuration, checked by its provider's schema, and/or its lease policy (a refused change writes nothing; an applied one is recorded in the activity log): set or clear the rehearsal faults of README \"Rehearsing recovery\", replace the whole configuration, or set the policy sandboxes acquired from now on use",
    )
    .option("--faults <json>", 'set config.faults, keeping every other key (local: \'{"failExports":9}\')')
    .option("--clear-faults", "remove config.faults")
    .option("--config <file>", "replace the whole configuration with this JSON file")
    .option(
      "--lease-policy <policy>",
      "set the lease policy new sandboxes are acquired with: ephemeral, reuse_by_environment or retain_on_failure (existing leases keep theirs); alone or with one configuration change",
    )
    .action(
      run("environment configure", async (ctx, environmentId: string, opts: { faults?: string; clearFaults?: boolean; config?: string; leasePolicy?: string }) =>
        (await import("./environment-configure")).environmentConfigure(ctx, environmentId, opts),
      ),
    );
}
