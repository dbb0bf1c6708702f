// environments.list: the Environments page's data (read-only), for runtime managers only,
// company-scoped. A daytona and a local environment over real PostgreSQL: the configuration as
// its provider validates it, the key variable's NAME and whether it is set in this process, never
// a key's value, and a configuration with a key-like field withheld.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { buildAuthWorld, callerFor, configureWebApp, disconnectWebApp, sessionPrincipal, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
let world: AuthWorld;
const KEY_VARIABLE = "DAYTONA_ENV_PAGE_TEST_KEY";
const KEY_VALUE = "dtn_env_page_secret_0123456789";

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
  const prisma = testDb.prisma();
  await prisma.environment.create({
    data: {
      companyId: world.companyA.id, name: "daytona-eu", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "retain_on_failure",
      config: { apiUrl: "https://daytona.example/api", apiKeyEnv: KEY_VARIABLE, target: "eu", snapshot: "copyback-agent", labels: { team: "core" }, autoStopMinutes: 30 },
    },
  });
  await prisma.environment.create({ data: { companyId: world.companyA.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment", config: { allowNetwork: false } } });
  // Hand-edited with a pasted key: never echoed.
  await prisma.environment.create({ data: { companyId: world.companyA.id, name: "pasted-key", provider: "daytona", pluginId: "builtin.daytona", config: { apiKey: KEY_VALUE } } });
  await prisma.environment.create({ data: { companyId: world.companyB.id, name: "globex-daytona", provider: "daytona", pluginId: "builtin.daytona", config: {} } });
});
afterEach(() => {
  delete process.env[KEY_VARIABLE];
});
afterAll(disconnectWebApp);

const caller = (userId: string, role: "owner" | "admin" | "runtime_manager" | "member") =>
  callerFor(testDb.prisma(), sessionPrincipal(userId, [{ companyId: world.companyA.id, role }]));

describe("environments.list", () => {
  it("a runtime manager sees the company's daytona and local environments as validated, the key variable named and its state, never a key", async () => {
    const manager = caller(world.users.manager.id, "runtime_manager");
    const before = await manager.environments.list({ companyId: world.companyA.id });
    expect(before.items.map((i) => i.name)).toEqual(["daytona-eu", world.a.environment.name, "local", "pasted-key"]);
    const daytona = before.items.find((i) => i.name === "daytona-eu")!;
    expect(daytona).toMatchObject({
      provider: "daytona",
      pluginId: "builtin.daytona",
      defaultLeasePolicy: "retain_on_failure",
      configuration: {
        kind: "daytona", apiUrl: "https://daytona.example/api", target: "eu", source: { kind: "snapshot", name: "copyback-agent" },
        resources: null, labels: [{ key: "team", value: "core" }], autoStopMinutes: 30, autoDeleteMinutes: null, apiKeyEnv: KEY_VARIABLE,
      },
      credential: { variable: KEY_VARIABLE, set: false, text: `not set: set ${KEY_VARIABLE} in the worker's environment` },
    });
    const local = before.items.find((i) => i.name === "local")!;
    expect(local).toMatchObject({ provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment", credential: null, configuration: { kind: "settings" } });
    expect(local.configuration.kind === "settings" && local.configuration.entries.find((e) => e.key === "allowNetwork")).toEqual({ key: "allowNetwork", value: "false" });
    expect(before.items.find((i) => i.name === "pasted-key")!.configuration).toMatchObject({ kind: "withheld", fields: ["apiKey"] });

    process.env[KEY_VARIABLE] = KEY_VALUE;
    const after = await manager.environments.list({ companyId: world.companyA.id });
    expect(after.items.find((i) => i.name === "daytona-eu")!.credential).toEqual({ variable: KEY_VARIABLE, set: true, text: "set" });
    // Neither the variable's value nor the pasted key is anywhere in the answer.
    expect(JSON.stringify(after)).not.toContain(KEY_VALUE);
    // Another company's environment is not listed.
    expect(after.items.some((i) => i.name === "globex-daytona")).toBe(false);
  });

  it("a daytona environment shows its newest sandbox's Daytona id and dashboard link, and the last dispatch refused for its key (issue 21)", async () => {
    const prisma = testDb.prisma();
    const companyId = world.companyA.id;
    const environment = await prisma.environment.create({ data: { companyId, name: "daytona-refused", provider: "daytona", pluginId: "builtin.daytona", config: { apiKeyEnv: KEY_VARIABLE } } });
    const agent = await prisma.agent.create({ data: { companyId, name: "dt-agent", command: ["/bin/true"], environmentId: environment.id } });
    const issue = await prisma.issue.create({ data: { companyId, number: 77, identifier: "ACME-77", title: "t", status: "blocked" } });
    const refused = await prisma.heartbeatRun.create({ data: { companyId, agentId: agent.id, nativeIssueId: issue.id, status: "failed", errorCode: "provider_credentials_rejected", errorMessage: "rejected" } });
    await prisma.runEvent.create({
      data: { companyId, runId: refused.id, level: "error", code: "environment.credentials_refused", message: `Daytona rejected the API key in the environment variable ${KEY_VARIABLE} (HTTP 401)`, payload: { code: "provider_credentials_rejected", variable: KEY_VARIABLE, environmentId: environment.id } },
    });
    const providerLeaseId = `daytona:sbx-env-page?api=${encodeURIComponent("https://app.daytona.io/api")}&keyEnv=${KEY_VARIABLE}`;
    const old = await prisma.environmentLease.create({
      data: { companyId, environmentId: environment.id, runId: refused.id, provider: "daytona", pluginId: "builtin.daytona", leasePolicy: "ephemeral", status: "destroyed", providerLeaseId: providerLeaseId.replace("sbx-env-page", "sbx-old"), acquiredAt: new Date(Date.now() + 60_000) },
    });
    const lease = await prisma.environmentLease.create({
      data: { companyId, environmentId: environment.id, runId: refused.id, provider: "daytona", pluginId: "builtin.daytona", leasePolicy: "retain_on_failure", status: "released", providerLeaseId },
    });
    const { items } = await caller(world.users.manager.id, "runtime_manager").environments.list({ companyId });
    const item = items.find((i) => i.id === environment.id)!;
    // The destroyed lease, though newer, is not the environment's sandbox any more.
    expect(item.sandbox).toMatchObject({ leaseId: lease.id, status: "released", sandboxId: "sbx-env-page", dashboardUrl: "https://app.daytona.io/dashboard/sandboxes" });
    expect(item.sandbox?.leaseId).not.toBe(old.id);
    // Its key variable is not set here: the live read is refused by the plugin before any request.
    expect(item.sandbox?.live).toMatchObject({ kind: "not_read" });
    expect(item.lastCredentialRefusal).toMatchObject({ runId: refused.id, code: "provider_credentials_rejected", variable: KEY_VARIABLE });
    expect(items.find((i) => i.name === "local")).toMatchObject({ sandbox: null, lastCredentialRefusal: null });
  });

  it("owners and admins may read it; a plain member is refused (runtime:manage); a company the user is not in reads as not found", async () => {
    for (const [userId, role] of [[world.users.owner.id, "owner"], [world.users.admin.id, "admin"]] as const) {
      const { items } = await caller(userId, role).environments.list({ companyId: world.companyA.id });
      expect(items.map((i) => i.name)).toContain("daytona-eu");
    }
    await expect(caller(world.users.member.id, "member").environments.list({ companyId: world.companyA.id })).rejects.toMatchObject({ code: "FORBIDDEN" });
    await expect(caller(world.users.manager.id, "runtime_manager").environments.list({ companyId: world.companyB.id })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
