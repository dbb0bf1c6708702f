// The `environment` commands: the sandbox environments of the instance database. Loaded on use,
// like the recovery commands: the database client is not needed by the file-level commands.
import type { Command } from "commander";
import { uuid } from "../arguments";
import type { Runner } from "../runner";

export function registerEnvironmentCommands(program: Command, run: Runner): void {
  const environment = program
    .command("environment")
    .description("the sandbox environments of the instance database: list them, create one, change their configuration (rehearsal faults) and lease policy");
  environment
    .command("list")
    .description("every environment with its id, company, provider, plugin, lease policy and configuration")
    .option("--company <ref>", "only this company's: its id, issue prefix or name")
    .action(
      run("environment list", async (ctx, opts: { company?: string }) => (await import("./environment-list")).environmentList(ctx, { company: opts.company })),
    );
  environment
    .command("create")
    .description(
      "create an environment of a company: the configuration checked by its provider's own schema (a configuration holding a key is refused), the name unique in the company; recorded in the activity log, a refusal writes nothing",
    )
    .requiredOption("--company <ref>", "the company: its id, issue prefix or name")
    .requiredOption("--name <name>", "the environment's name, unique in the company")
    .requiredOption("--provider <provider>", "local, fake or daytona (its built-in plugin serves it)")
    .option("--config <file>", "the configuration, a JSON file (default {}: the provider's defaults)")
    .option("--lease-policy <policy>", "ephemeral (default), reuse_by_environment or retain_on_failure")
    .action(
      run("environment create", async (ctx, opts: { company: string; name: string; provider: string; config?: string; leasePolicy?: string }) =>
        (await import("./environment-create")).environmentCreate(ctx, opts),
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
