// `copyback environment configure ENV_ID [--faults JSON | --clear-faults | --config FILE]
// [--lease-policy POLICY]`: change an environment's stored configuration, checked by the same zod
// schema its provider parses it with at run time (providers/environment-config.ts), and/or its
// lease policy (environments.default_lease_policy, checked against the schema's enum). It is how an
// operator or an E2E suite sets the rehearsal faults of README "Rehearsing recovery" or a
// `reuse_by_environment` environment on a real install (the one command that sets the policy). A refused
// change writes nothing; an applied one writes its activity row in the same transaction (system
// actor). Both apply to sandboxes acquired after it (the worker reads them at acquisition); leases
// already held keep what they were started with (leases/environment-lease-policy.ts says why).
import { readFile } from "node:fs/promises";
import { Prisma, type TransactionClient } from "@copyback/db/client";
import { isDomainError, notFound } from "../../errors";
import { leasePolicyChangeNotes, parseLeasePolicy, type ExistingLeases, type LeasePolicyChange } from "../../leases/environment-lease-policy";
import { leaseHeldSql } from "../../leases/lease-holds";
import { retireWarmSandboxes } from "../../leases/retire-warm-sandboxes";
import type { LeasePolicy } from "../../leases/lease-types";
import { controllerVariable } from "../../providers/daytona/env";
import { nextEnvironmentConfig, type ConfigChange } from "../../providers/environment-config";
import { environmentView } from "../../providers/environment-view";
import type { ProviderKind } from "../../providers/types";
import { recordActivity, SYSTEM_ACTOR } from "../../records/record-activity";
import { withCliDatabase } from "../database";
import { CliError } from "../errors";
import { EXIT } from "../exit-codes";
import { requireFile } from "../input-files";
import type { CommandContext, CommandResult } from "../io";

export interface ConfigureOptions {
  faults?: string;
  clearFaults?: boolean;
  config?: string;
  leasePolicy?: string;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(EXIT.usage, "invalid_request", `${what} is not valid JSON (${error instanceof Error ? error.message : "parse error"}); nothing written.`);
  }
}

/** The configuration change asked for: at most one of the three flags; none when only --lease-policy is given. */
async function changeOf(opts: ConfigureOptions): Promise<ConfigChange | null> {
  const given = [opts.faults !== undefined, opts.clearFaults === true, opts.config !== undefined].filter(Boolean).length;
  if (given > 1 || (given === 0 && opts.leasePolicy === undefined)) {
    throw new CliError(EXIT.usage, "invalid_request", "give one of --faults JSON, --clear-faults or --config FILE, and/or --lease-policy POLICY; nothing written.");
  }
  if (opts.faults !== undefined) return { kind: "faults", faults: parseJson(opts.faults, "--faults") };
  if (opts.clearFaults) return { kind: "faults", faults: null };
  if (opts.config === undefined) return null;
  await requireFile(opts.config, "The configuration file");
  return { kind: "replace", config: parseJson(await readFile(opts.config, "utf8"), `The configuration file ${opts.config}`) };
}

function leasePolicyOf(opts: ConfigureOptions): LeasePolicy | null {
  if (opts.leasePolicy === undefined) return null;
  const parsed = parseLeasePolicy(opts.leasePolicy);
  if (!parsed.ok) throw new CliError(EXIT.usage, "invalid_request", `${parsed.message}; nothing written.`);
  return parsed.policy;
}

/** The environment's leases that still exist, by what a policy change leaves them (read under the environment's row lock). */
async function existingLeases(tx: TransactionClient, environmentId: string): Promise<ExistingLeases> {
  const [row] = await tx.$queryRaw<{ active: number; held: number; reusable: number }[]>(Prisma.sql`
    SELECT count(*) FILTER (WHERE l.status = 'active'::lease_status)::int AS active,
           count(*) FILTER (WHERE ${leaseHeldSql("l")})::int AS held,
           count(*) FILTER (WHERE l.status = 'released'::lease_status AND l.lease_policy = 'reuse_by_environment'::lease_policy AND NOT ${leaseHeldSql("l")})::int AS reusable
    FROM environment_leases l
    WHERE l.environment_id = ${environmentId}::uuid AND l.status <> 'destroyed'::lease_status`);
  return row ?? { active: 0, held: 0, reusable: 0 };
}

export async function environmentConfigure(ctx: CommandContext, environmentId: string, opts: ConfigureOptions): Promise<CommandResult> {
  // Every input is checked before the database is opened: a refused change writes nothing.
  const change = await changeOf(opts);
  const leasePolicy = leasePolicyOf(opts);
  return withCliDatabase(ctx, async ({ prisma, source }) => {
    const { updated, policyChange } = await prisma.$transaction(async (tx) => {
      const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM environments WHERE id = ${environmentId}::uuid FOR UPDATE`;
      if (rows.length !== 1) throw notFound(`The environment ${environmentId}`);
      const env = await tx.environment.findUniqueOrThrow({ where: { id: environmentId }, select: { companyId: true, provider: true, config: true, defaultLeasePolicy: true } });
      let config: Record<string, unknown> | null = null;
      if (change) {
        try {
          config = nextEnvironmentConfig(env.provider as ProviderKind, env.config, change);
        } catch (error) {
          if (isDomainError(error)) throw new CliError(EXIT.usage, error.code, `${error.message} Nothing written.`);
          throw error;
        }
      }
      const policyChange: LeasePolicyChange | null =
        leasePolicy === null ? null : { from: env.defaultLeasePolicy, to: leasePolicy, existing: await existingLeases(tx, environmentId) };
      const policyChanged = policyChange !== null && policyChange.from !== policyChange.to;
      const updated = await tx.environment.update({
        where: { id: environmentId },
        data: { ...(config === null ? {} : { config: config as object }), ...(policyChanged ? { defaultLeasePolicy: policyChange.to } : {}) },
        select: { id: true, name: true, provider: true, config: true, defaultLeasePolicy: true },
      });
      const activity = { companyId: env.companyId, actor: SYSTEM_ACTOR, entityType: "environment", entityId: environmentId };
      if (config !== null) {
        await recordActivity(tx, { ...activity, action: "environment.config_changed", details: { provider: env.provider, from: env.config as Prisma.InputJsonValue, to: config as Prisma.InputJsonValue } });
      }
      // Warm sandboxes nothing will reuse any more are destroyed by the cleanup sweep, not kept forever.
      const retired = policyChanged && policyChange.to !== "reuse_by_environment" ? await retireWarmSandboxes(tx, environmentId) : [];
      if (policyChanged) {
        await recordActivity(tx, {
          ...activity,
          action: "environment.lease_policy_changed",
          details: { from: policyChange.from, to: policyChange.to, existingLeases: { ...policyChange.existing }, retiredLeaseIds: retired },
        });
      }
      return { updated, policyChange: policyChange && { ...policyChange, retiredLeaseIds: retired } };
    });
    // Issue 21: a daytona configuration names its key's variable; say whether it is set here (its NAME only).
    const credential = updated.provider === "daytona" ? environmentView({ ...updated, pluginId: "", provider: "daytona" }, controllerVariable).credential : null;
    const json = { database: source, environment: updated, credential, leasePolicyChange: policyChange && { ...policyChange, changed: policyChange.from !== policyChange.to } };
    const text = [`environment ${updated.name} (${updated.provider}, ${updated.id}) configured: lease policy ${updated.defaultLeasePolicy}, config ${JSON.stringify(updated.config)}`];
    if (change) text.push("sandboxes acquired from now on use the new configuration (leases already held keep theirs)");
    if (credential) text.push(`API key variable ${credential.variable}: ${credential.text} (in this process; the worker's environment is what counts)`);
    if (policyChange) text.push(...leasePolicyChangeNotes(policyChange));
    return { exitCode: EXIT.ok, json, text };
  });
}
