// `copyback environment list|configure` against a real PostgreSQL: the rehearsal faults of
// README "Rehearsing recovery" set on a real install, checked by the provider's own schema; a
// refused change (bad JSON, a misspelled fault, an unknown environment, conflicting flags, a bad
// lease policy) writes nothing; the lease policy applies to new acquisitions only.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { acquireLease, LEASE_POLICIES, releaseLeaseByPolicy } from "../../src/leases/index";
import { LEASE_METADATA_KEYS } from "../../src/leases/lease-metadata";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { createFakeProvider } from "../../src/providers/fake/index";
import { parseFakeConfig } from "../../src/providers/fake/config";
import { parseLocalConfig } from "../../src/providers/local/config";
import { buildLeaseWorld, registryOf } from "../leases/lease-fixture";
import { parseJson, runCli } from "./helpers";

const db = useTestDatabase();
let dir = "";
let local = "";
let fake = "";

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "copyback-cli-env-"));
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `CLI env ${path.basename(dir)}`, issuePrefix: "ENV" } });
  local = (await prisma.environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", config: { allowNetwork: true } } })).id;
  fake = (await prisma.environment.create({ data: { companyId: company.id, name: "fake", provider: "fake", pluginId: "builtin.fake" } })).id;
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const cli = (argv: string[]) => runCli(["--json", ...argv], { databaseUrl: db.url(), copybackHome: dir });
const configOf = async (id: string) => (await db.prisma().environment.findUniqueOrThrow({ where: { id } })).config;

describe("copyback environment", () => {
  it("lists the environments with their ids, providers and configuration", async () => {
    const run = await cli(["environment", "list"]);
    expect(run.code).toBe(EXIT.ok);
    const out = parseJson(run) as { environments: { id: string; provider: string; config: unknown }[] };
    expect(out.environments.find((e) => e.id === local)).toMatchObject({ provider: "local", config: { allowNetwork: true } });
    expect(out.environments.find((e) => e.id === fake)).toMatchObject({ provider: "fake" });
  });

  it("never prints a key pasted into a stored configuration: the field is named, the value is not (json and text)", async () => {
    const prisma = db.prisma();
    const { companyId } = await prisma.environment.findUniqueOrThrow({ where: { id: local }, select: { companyId: true } });
    const pasted = await prisma.environment.create({ data: { companyId, name: "pasted", provider: "local", pluginId: "builtin.local", config: { nested: { apiKey: "sk-live-0123456789" } } } });
    try {
      const json = await cli(["environment", "list"]);
      expect(json.stdout).not.toContain("sk-live-0123456789");
      const out = parseJson(json) as { environments: { id: string; config: unknown }[] };
      expect(out.environments.find((e) => e.id === pasted.id)?.config).toEqual({ hidden: expect.stringContaining("nested.apiKey") });
      expect(out.environments.find((e) => e.id === local)?.config).toEqual({ allowNetwork: true });
      const text = await runCli(["environment", "list"], { databaseUrl: db.url(), copybackHome: dir });
      expect(text.stdout).not.toContain("sk-live-0123456789");
      expect(text.stdout).toContain("nested.apiKey");
    } finally {
      await prisma.environment.delete({ where: { id: pasted.id } });
    }
  });

  it("sets a local rehearsal fault the local provider then reads, keeping the other keys, and clears it", async () => {
    const set = await cli(["environment", "configure", local, "--faults", '{"failExports":9}']);
    expect(set.code).toBe(EXIT.ok);
    expect(await configOf(local)).toEqual({ allowNetwork: true, faults: { failExports: 9 } });
    expect(parseLocalConfig(await configOf(local)).faults).toEqual({ failExports: 9 });
    const cleared = await cli(["environment", "configure", local, "--clear-faults"]);
    expect(cleared.code).toBe(EXIT.ok);
    expect(await configOf(local)).toEqual({ allowNetwork: true });
  });

  it("sets the fake provider's resume and probe faults from a configuration file", async () => {
    const file = path.join(dir, "fake.json");
    await writeFile(file, JSON.stringify({ faults: { probeFailure: 1, resumeReplyLost: 1 } }));
    const run = await cli(["environment", "configure", fake, "--config", file]);
    expect(run.code).toBe(EXIT.ok);
    expect(parseFakeConfig(await configOf(fake)).faults).toMatchObject({ probeFailure: 1, resumeReplyLost: 1 });
  });

  it("refuses a configuration holding a key for every provider, as environment create does, naming the field and never the value, writing nothing", async () => {
    const before = JSON.stringify(await configOf(local));
    const file = path.join(dir, "key.json");
    await writeFile(file, JSON.stringify({ allowNetwork: true, env: { OPENAI_API_KEY: "sk-live-0123456789" } }));
    const refused = await cli(["environment", "configure", local, "--config", file]);
    expect(refused.code).toBe(EXIT.usage);
    const error = (parseJson(refused) as { error: { code: string; message: string } }).error;
    expect(error).toMatchObject({ code: "provider_config_holds_key" });
    expect(error.message).toContain("env.OPENAI_API_KEY");
    expect(refused.stdout + refused.stderr).not.toContain("sk-live-0123456789");
    expect(JSON.stringify(await configOf(local))).toBe(before);
  });

  it("refuses a misspelled fault, bad JSON, conflicting flags and an unknown environment, writing nothing", async () => {
    await cli(["environment", "configure", local, "--faults", '{"failExports":2}']);
    const before = JSON.stringify(await configOf(local));
    const misspelled = await cli(["environment", "configure", local, "--faults", '{"failExport":2}']);
    expect(misspelled.code).toBe(EXIT.usage);
    expect((parseJson(misspelled) as { error: { code: string; message: string } }).error).toMatchObject({ code: "provider_config_invalid" });
    const badJson = await cli(["environment", "configure", local, "--faults", "{failExports"]);
    expect(badJson.code).toBe(EXIT.usage);
    const both = await cli(["environment", "configure", local, "--faults", "{}", "--clear-faults"]);
    expect(both.code).toBe(EXIT.usage);
    const none = await cli(["environment", "configure", local]);
    expect(none.code).toBe(EXIT.usage);
    const unknown = await cli(["environment", "configure", "00000000-0000-4000-8000-000000000000", "--clear-faults"]);
    expect(unknown.code).not.toBe(EXIT.ok);
    expect((parseJson(unknown) as { error: { code: string } }).error.code).toBe("not_found");
    expect(JSON.stringify(await configOf(local))).toBe(before);
  });
});

// Without this command an environment's lease policy could only be set in SQL.
describe("copyback environment configure --lease-policy", () => {
  const activityOf = (environmentId: string) =>
    db.prisma().activityLog.findMany({ where: { entityType: "environment", entityId: environmentId }, orderBy: { createdAt: "asc" } });

  it("sets the policy, `environment list` shows it and the activity log records the change", async () => {
    const set = await cli(["environment", "configure", local, "--lease-policy", "reuse_by_environment"]);
    expect(set.code, set.stderr).toBe(EXIT.ok);
    expect(parseJson(set)).toMatchObject({ environment: { id: local, defaultLeasePolicy: "reuse_by_environment" }, leasePolicyChange: { from: "ephemeral", to: "reuse_by_environment", changed: true } });
    const listed = parseJson(await cli(["environment", "list"])) as { environments: { id: string; defaultLeasePolicy: string }[] };
    expect(listed.environments.find((e) => e.id === local)?.defaultLeasePolicy).toBe("reuse_by_environment");
    const text = await runCli(["environment", "list"], { databaseUrl: db.url(), copybackHome: dir });
    expect(text.stdout.split("\n").find((line) => line.includes(local))).toContain("reuse_by_environment");
    expect((await activityOf(local)).filter((a) => a.action === "environment.lease_policy_changed").map((a) => a.details)).toEqual([
      { from: "ephemeral", to: "reuse_by_environment", existingLeases: { active: 0, held: 0, reusable: 0 }, retiredLeaseIds: [] },
    ]);
    // The same policy again changes nothing and records nothing.
    const again = await cli(["environment", "configure", local, "--lease-policy", "reuse_by_environment"]);
    expect(parseJson(again)).toMatchObject({ leasePolicyChange: { changed: false } });
    expect((await activityOf(local)).filter((a) => a.action === "environment.lease_policy_changed")).toHaveLength(1);
    // A configuration change is recorded too, with what it replaced.
    await cli(["environment", "configure", local, "--faults", '{"failExports":1}']);
    const configured = (await activityOf(local)).filter((a) => a.action === "environment.config_changed").at(-1);
    expect(configured?.details).toMatchObject({ provider: "local", to: { faults: { failExports: 1 } } });
    await cli(["environment", "configure", local, "--clear-faults", "--lease-policy", "ephemeral"]);
  });

  it("a bad policy is refused before anything is opened and changes nothing, with the valid choices named", async () => {
    const before = await db.prisma().environment.findUniqueOrThrow({ where: { id: local } });
    const logged = (await activityOf(local)).length;
    for (const argv of [["--lease-policy", "forever"], ["--lease-policy", "Ephemeral"], ["--faults", '{"failExports":3}', "--lease-policy", "reuse"]]) {
      const run = await cli(["environment", "configure", local, ...argv]);
      expect(run.code, argv.join(" ")).toBe(EXIT.usage);
      const error = (parseJson(run) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe("invalid_request");
      expect(error.message).toContain("ephemeral, reuse_by_environment, retain_on_failure");
      expect(error.message).toContain("nothing written");
    }
    const after = await db.prisma().environment.findUniqueOrThrow({ where: { id: local } });
    expect({ policy: after.defaultLeasePolicy, config: after.config, updatedAt: after.updatedAt }).toEqual({ policy: before.defaultLeasePolicy, config: before.config, updatedAt: before.updatedAt });
    expect(await activityOf(local)).toHaveLength(logged);
  });

  it("R-ORP-3, R-DT-2: existing leases keep the policy they were acquired with, the output says so, only new acquisitions use the new one", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma, { defaultLeasePolicy: "reuse_by_environment" });
    const plugin = createFakeProvider();
    const registry = registryOf(plugin);
    // A released reusable sandbox (its run committed), an active one, and a held one (its run failed).
    const first = await acquireLease(prisma, registry, w.acquireInput(await w.newRun()));
    await releaseLeaseByPolicy(prisma, registry, { leaseId: first.lease.id, runId: first.lease.runId!, outcome: "committed" });
    const second = await w.anotherWorkspace("active");
    const active = await acquireLease(prisma, registry, w.acquireInput(await w.newRun(), { executionWorkspaceId: second.id }));
    const third = await w.anotherWorkspace("held");
    const failedRun = await w.newRun();
    const held = await acquireLease(prisma, registry, w.acquireInput(failedRun, { executionWorkspaceId: third.id }));
    await releaseLeaseByPolicy(prisma, registry, { leaseId: held.lease.id, runId: failedRun, outcome: "failed" });
    await prisma.heartbeatRun.update({ where: { id: failedRun }, data: { status: "failed" } });

    const text = await runCli(["environment", "configure", w.environment.id, "--lease-policy", "retain_on_failure"], { databaseUrl: db.url(), copybackHome: dir });
    expect(text.code, text.stderr).toBe(EXIT.ok);
    expect(text.stdout).toContain("only sandboxes acquired from now on use retain_on_failure");
    expect(text.stdout).toContain("existing leases keep the policy they were acquired with: 1 active");
    expect(text.stdout).toContain("1 held for recovery");
    expect(text.stdout).toContain("1 of 1 warm reuse_by_environment sandbox (released, holding nothing for recovery) will be destroyed by the lease cleanup sweep");
    const run = await cli(["environment", "configure", w.environment.id, "--lease-policy", "ephemeral"]);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    // The warm one has its destroy intent already: nothing left to retire.
    expect(parseJson(run)).toMatchObject({ leasePolicyChange: { from: "retain_on_failure", to: "ephemeral", existing: { active: 1, held: 1, reusable: 0 }, retiredLeaseIds: [] } });

    const leases = await prisma.environmentLease.findMany({ where: { id: { in: [first.lease.id, active.lease.id, held.lease.id] } }, select: { id: true, leasePolicy: true, status: true } });
    expect(leases.map((l) => l.leasePolicy)).toEqual(["reuse_by_environment", "reuse_by_environment", "reuse_by_environment"]);
    const statusOf = (id: string) => leases.find((l) => l.id === id)?.status;
    // The active and the held lease are untouched; the warm one waits for the cleanup sweep's destroy.
    expect([statusOf(active.lease.id), statusOf(held.lease.id), statusOf(first.lease.id)]).toEqual(["active", "released", "pending_cleanup"]);
    const warm = await prisma.environmentLease.findUniqueOrThrow({ where: { id: first.lease.id } });
    expect((warm.metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.destroyIntent]).toMatchObject({ leaseId: first.lease.id, reason: "policy_changed" });
    expect((await activityOf(w.environment.id)).find((a) => a.action === "environment.lease_policy_changed")?.details).toMatchObject({ retiredLeaseIds: [first.lease.id] });
    // A new acquisition on the released sandbox's workspace: a new ephemeral allocation, never the reusable one.
    const next = await acquireLease(prisma, registry, w.acquireInput(await w.newRun()));
    expect(next.reused).toBe(false);
    expect(next.lease.leasePolicy).toBe("ephemeral");
    // The cleanup sweep destroys the warm sandbox through its pinned plugin; the held one stays.
    const sweep = leaseCleanupSweep({ db: prisma, registry, controller: { host: "test-host", pid: 4244 }, sleep: async () => {} });
    for (const unit of await sweep.due(50)) await sweep.handle(unit);
    expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: first.lease.id } })).status).toBe("destroyed");
    expect(plugin.store.has(first.lease.providerLeaseId!)).toBe(false);
    expect(plugin.store.has(held.lease.providerLeaseId!)).toBe(true);
    expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: held.lease.id } })).status).toBe("released");
  });

  it("the command's help names every lease policy of the schema", async () => {
    const help = await runCli(["environment", "configure", "--help"]);
    for (const policy of LEASE_POLICIES) expect(help.stdout).toContain(policy);
  });
});
