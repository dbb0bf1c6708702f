// Issue 21 part 5: environments.create and agents.setEnvironment, the Environments page's "New
// environment" form and agent chooser, over real PostgreSQL through the tRPC caller. Owners and
// administrators only (environments:manage): a runtime manager or a member is refused and nothing
// is written. The same core services as the CLI: the configuration checked by the provider's own
// schema, a key refused naming the field (never the value), the name unique in the company, the
// activity row with the user as actor; another company's agent or environment is not found.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { buildAuthWorld, callerFor, configureWebApp, disconnectWebApp, sessionPrincipal, type AuthWorld } from "./auth-fixture";
import { rejection } from "./routers-fixture";

const testDb = useTestDatabase();
let world: AuthWorld;
const KEY_VARIABLE = "DAYTONA_ENV_CREATE_PAGE_KEY";
const KEY_VALUE = "dtn_env_create_page_secret_5150";

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
});
afterEach(() => {
  delete process.env[KEY_VARIABLE];
});
afterAll(disconnectWebApp);

type Role = "owner" | "admin" | "runtime_manager" | "member";
const caller = (userId: string, role: Role) => callerFor(testDb.prisma(), sessionPrincipal(userId, [{ companyId: world.companyA.id, role }]));
const admin = () => caller(world.users.admin.id, "admin");
const written = async () => ({
  environments: await testDb.prisma().environment.findMany({ where: { companyId: world.companyA.id }, orderBy: { name: "asc" }, select: { id: true, name: true, config: true } }),
  agents: await testDb.prisma().agent.findMany({ where: { companyId: world.companyA.id }, orderBy: { name: "asc" }, select: { id: true, environmentId: true } }),
  activity: await testDb.prisma().activityLog.count({ where: { companyId: world.companyA.id, action: { in: ["environment.created", "agent.environment_changed"] } } }),
});

describe("environments.create", () => {
  it("an administrator creates a daytona environment: the row with the built-in plugin, the activity row by that user, the key variable named and its state, never a key", async () => {
    process.env[KEY_VARIABLE] = KEY_VALUE;
    const config = JSON.stringify({ apiKeyEnv: KEY_VARIABLE, target: "eu", snapshot: "copyback-agent" });
    const created = await admin().environments.create({ companyId: world.companyA.id, name: "daytona-eu", provider: "daytona", config, leasePolicy: "retain_on_failure" });
    expect(created).toMatchObject({ name: "daytona-eu", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "retain_on_failure", credential: { variable: KEY_VARIABLE, set: true } });
    expect(JSON.stringify(created)).not.toContain(KEY_VALUE);
    const row = await testDb.prisma().environment.findUniqueOrThrow({ where: { id: created.id } });
    expect(row).toMatchObject({ companyId: world.companyA.id, config: { apiKeyEnv: KEY_VARIABLE, target: "eu", snapshot: "copyback-agent" } });
    const activity = await testDb.prisma().activityLog.findFirstOrThrow({ where: { entityId: created.id, action: "environment.created" } });
    expect(activity).toMatchObject({ actorType: "user", actorId: world.users.admin.id, companyId: world.companyA.id });

    const listed = await caller(world.users.manager.id, "runtime_manager").environments.list({ companyId: world.companyA.id });
    expect(listed.items.find((i) => i.id === created.id)).toMatchObject({ configuration: { kind: "daytona", apiKeyEnv: KEY_VARIABLE } });
  });

  it("an owner creates a local one with an empty configuration (the provider's defaults)", async () => {
    const created = await caller(world.users.owner.id, "owner").environments.create({ companyId: world.companyA.id, name: "local-box", provider: "local", config: "  " });
    expect(created).toMatchObject({ provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "ephemeral", credential: null });
    expect((await testDb.prisma().environment.findUniqueOrThrow({ where: { id: created.id } })).config).toEqual({});
  });

  it("a runtime manager, a member and another company's owner are refused, and nothing is written", async () => {
    const before = await written();
    const input = { companyId: world.companyA.id, name: "not-mine", provider: "local", config: "{}" };
    for (const [who, role] of [[world.users.manager.id, "runtime_manager"], [world.users.member.id, "member"]] as const) {
      expect(await rejection(caller(who, role).environments.create(input)), role).toMatchObject({ code: "FORBIDDEN" });
    }
    const outsider = callerFor(testDb.prisma(), sessionPrincipal(world.users.otherOwner.id, [{ companyId: world.companyB.id, role: "owner" }]));
    expect((await rejection(outsider.environments.create(input))).code).toMatch(/FORBIDDEN|NOT_FOUND/);
    expect(await written()).toEqual(before);
  });

  it("each bad input is a calm refusal with a stable code that names fields, never a key, and writes nothing", async () => {
    const before = await written();
    const cases: [string, { name: string; provider: string; config: string; leasePolicy?: string }, string, string][] = [
      ["key", { name: "k", provider: "daytona", config: JSON.stringify({ apiKey: KEY_VALUE }) }, "UNPROCESSABLE_CONTENT", "provider_config_holds_key"],
      ["not JSON", { name: "j", provider: "daytona", config: `{"apiKeyEnv": "${KEY_VALUE}",` }, "UNPROCESSABLE_CONTENT", "invalid_request"],
      ["schema", { name: "s", provider: "daytona", config: JSON.stringify({ apiKeyEnv: "DATABASE_URL" }) }, "UNPROCESSABLE_CONTENT", "provider_config_invalid"],
      ["provider", { name: "p", provider: "kubernetes", config: "{}" }, "UNPROCESSABLE_CONTENT", "provider_unknown"],
      ["policy", { name: "l", provider: "local", config: "{}", leasePolicy: "forever" }, "UNPROCESSABLE_CONTENT", "lease_policy_invalid"],
      ["name", { name: " ", provider: "local", config: "{}" }, "UNPROCESSABLE_CONTENT", "environment_name_invalid"],
      ["taken", { name: world.a.environment.name, provider: "local", config: "{}" }, "CONFLICT", "environment_name_taken"],
    ];
    for (const [what, input, code, domainCode] of cases) {
      const refused = await rejection(admin().environments.create({ companyId: world.companyA.id, ...input }));
      expect(refused, what).toMatchObject({ code, domainCode });
      expect(refused.message, what).not.toContain(KEY_VALUE);
    }
    const key = await rejection(admin().environments.create({ companyId: world.companyA.id, name: "k", provider: "daytona", config: JSON.stringify({ apiKey: KEY_VALUE }) }));
    expect(key.message).toContain("apiKey");
    expect(key.message).toContain("apiKeyEnv");
    expect(await written()).toEqual(before);
  });
});

describe("agents.setEnvironment", () => {
  it("an administrator points an agent at an environment of the company, with the activity row; the page lists the agent with it; a repeat changes nothing", async () => {
    const agentId = world.secondAgentA.id;
    const environmentId = world.a.environment.id;
    const set = await admin().agents.setEnvironment({ companyId: world.companyA.id, agentId, environmentId });
    expect(set).toMatchObject({ changed: true, previousEnvironmentId: null, agent: { id: agentId }, environment: { id: environmentId } });
    expect((await testDb.prisma().agent.findUniqueOrThrow({ where: { id: agentId } })).environmentId).toBe(environmentId);
    const activity = await testDb.prisma().activityLog.findFirstOrThrow({ where: { entityId: agentId, action: "agent.environment_changed" } });
    expect(activity).toMatchObject({ actorType: "user", actorId: world.users.admin.id, details: { from: null, to: environmentId } });
    const listed = await admin().environments.list({ companyId: world.companyA.id });
    expect(listed.agents.find((a) => a.id === agentId)).toEqual({ id: agentId, name: "Reviewer", environmentId });

    const before = await written();
    expect(await admin().agents.setEnvironment({ companyId: world.companyA.id, agentId, environmentId })).toMatchObject({ changed: false });
    expect(await written()).toEqual(before);
  });

  it("a runtime manager is refused; another company's agent or environment is not found; nothing changes", async () => {
    const before = await written();
    const own = { companyId: world.companyA.id, agentId: world.a.agent.id, environmentId: world.a.environment.id };
    expect(await rejection(caller(world.users.manager.id, "runtime_manager").agents.setEnvironment(own))).toMatchObject({ code: "FORBIDDEN" });
    expect(await rejection(caller(world.users.member.id, "member").agents.setEnvironment(own))).toMatchObject({ code: "FORBIDDEN" });
    expect(await rejection(admin().agents.setEnvironment({ ...own, agentId: world.b.agent.id }))).toMatchObject({ code: "NOT_FOUND", domainCode: "agent_not_found" });
    expect(await rejection(admin().agents.setEnvironment({ ...own, environmentId: world.b.environment.id }))).toMatchObject({ code: "NOT_FOUND", domainCode: "environment_not_found" });
    expect(await written()).toEqual(before);
    expect((await testDb.prisma().agent.findUniqueOrThrow({ where: { id: world.b.agent.id } })).environmentId).toBeNull();
  });
});
