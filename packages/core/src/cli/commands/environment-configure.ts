// `copyback environment configure ENV_ID (--faults JSON | --clear-faults | --config FILE)`: change
// an environment's stored configuration, checked by the same zod schema its provider parses it
// with at run time (providers/environment-config.ts). It is how an operator or an E2E suite sets
// the rehearsal faults of README "Rehearsing recovery" on a real install. A refused change
// writes nothing. The new configuration applies to sandboxes acquired after it (the worker reads
// it at acquisition); leases already held keep what they were started with.
import { readFile } from "node:fs/promises";
import { isDomainError, notFound } from "../../errors";
import { nextEnvironmentConfig, type ConfigChange } from "../../providers/environment-config";
import type { ProviderKind } from "../../providers/types";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import { requireFile } from "../input-files";
import type { CommandContext, CommandResult } from "../io";

export interface ConfigureOptions {
  faults?: string;
  clearFaults?: boolean;
  config?: string;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(EXIT.usage, "invalid_request", `${what} is not valid JSON (${error instanceof Error ? error.message : "parse error"}); nothing written.`);
  }
}

async function changeOf(opts: ConfigureOptions): Promise<ConfigChange> {
  const given = [opts.faults !== undefined, opts.clearFaults === true, opts.config !== undefined].filter(Boolean).length;
  if (given !== 1) throw new CliError(EXIT.usage, "invalid_request", "give exactly one of --faults JSON, --clear-faults or --config FILE; nothing written.");
  if (opts.faults !== undefined) return { kind: "faults", faults: parseJson(opts.faults, "--faults") };
  if (opts.clearFaults) return { kind: "faults", faults: null };
  const file = opts.config as string;
  await requireFile(file, "The configuration file");
  return { kind: "replace", config: parseJson(await readFile(file, "utf8"), `The configuration file ${file}`) };
}

export async function environmentConfigure(ctx: CommandContext, environmentId: string, opts: ConfigureOptions): Promise<CommandResult> {
  const change = await changeOf(opts);
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const updated = await prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM environments WHERE id = ${environmentId}::uuid FOR UPDATE`;
      if (rows.length !== 1) throw notFound(`The environment ${environmentId}`);
      const env = await tx.environment.findUniqueOrThrow({ where: { id: environmentId }, select: { provider: true, config: true } });
      let config: Record<string, unknown>;
      try {
        config = nextEnvironmentConfig(env.provider as ProviderKind, env.config, change);
      } catch (error) {
        if (isDomainError(error)) throw new CliError(EXIT.usage, error.code, `${error.message} Nothing written.`);
        throw error;
      }
      return tx.environment.update({ where: { id: environmentId }, data: { config: config as object }, select: { id: true, name: true, provider: true, config: true } });
    });
    const json = { database: source, environment: updated };
    return { exitCode: EXIT.ok, json, text: [`environment ${updated.name} (${updated.provider}, ${updated.id}) configured: ${JSON.stringify(updated.config)}`, "sandboxes acquired from now on use it (leases already held keep theirs)"] };
  });
}
