// Issue 21 part 5: `copyback environment create` against a real PostgreSQL. A created environment
// has its provider's built-in plugin, the configuration as given (checked by the provider's own
// schema) and an `environment.created` activity row in the same transaction; each bad input (a
// key in the configuration, a schema violation, a file that is not JSON, an unknown or unsupported
// provider, a bad lease policy or name, a duplicate name, an unknown or ambiguous company) is a
// clear error that writes nothing.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { createEnvironment } from "../../src/environments/create-environment";
import { parseDaytonaConfig } from "../../src/providers/daytona/config";
import { SYSTEM_ACTOR } from "../../src/records/record-activity";
import { parseJson, runCli } from "./helpers";

const db = useTestDatabase();
const VARIABLE = "DAYTONA_CLI_CREATE_TEST_KEY";
const SECRET = "dtn_cli_create_secret_value_91";
let dir = "";
let companyId = "";
let prefix = "";

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "copyback-cli-env-create-"));
  prefix = "NEWENV";
  companyId = (await db.prisma().company.create({ data: { name: `CLI create ${path.basename(dir)}`, issuePrefix: prefix } })).id;
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  delete process.env[VARIABLE];
});

const cli = (argv: string[], json = true) => runCli(json ? ["--json", ...argv] : argv, { databaseUrl: db.url(), copybackHome: dir });
const file = async (name: string, content: string) => {
  const at = path.join(dir, name);
  await writeFile(at, content);
  return at;
};
/** Everything a refused create could have written. */
const written = async () => ({
  environments: await db.prisma().environment.findMany({ where: { companyId }, orderBy: { name: "asc" }, select: { id: true, name: true, config: true } }),
  activity: await db.prisma().activityLog.count({ where: { companyId, action: "environment.created" } }),
});

describe("copyback environment create", () => {
  it("creates a daytona environment from a config file for the company named by its issue prefix, with its activity row, and says the key variable's state by NAME only", async () => {
    const config = await file("daytona.json", JSON.stringify({ apiKeyEnv: VARIABLE, target: "eu", snapshot: "copyback-agent", autoStopMinutes: 60 }));
    process.env[VARIABLE] = SECRET;
    const run = await cli(["environment", "create", "--company", prefix.toLowerCase(), "--name", "daytona", "--provider", "daytona", "--config", config, "--lease-policy", "retain_on_failure"]);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).not.toContain(SECRET);
    const out = parseJson(run) as { environment: { id: string }; company: { id: string }; credential: { variable: string; set: boolean } };
    expect(out.company.id).toBe(companyId);
    expect(out.credential).toMatchObject({ variable: VARIABLE, set: true });

    const row = await db.prisma().environment.findUniqueOrThrow({ where: { id: out.environment.id } });
    expect(row).toMatchObject({ companyId, name: "daytona", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "retain_on_failure" });
    expect(row.config).toEqual({ apiKeyEnv: VARIABLE, target: "eu", snapshot: "copyback-agent", autoStopMinutes: 60 });
    // What the worker parses at acquisition reads the stored row.
    expect(parseDaytonaConfig(row.config)).toMatchObject({ apiUrl: "https://app.daytona.io/api", apiKeyEnv: VARIABLE, snapshot: "copyback-agent" });
    const activity = await db.prisma().activityLog.findMany({ where: { companyId, entityId: row.id } });
    expect(activity).toHaveLength(1);
    expect(activity[0]).toMatchObject({ action: "environment.created", actorType: "system", entityType: "environment", details: { name: "daytona", provider: "daytona", pluginId: "builtin.daytona", leasePolicy: "retain_on_failure" } });

    const listed = parseJson(await cli(["environment", "list", "--company", prefix])) as { environments: { id: string; daytona: { credential: { variable: string } } | null }[] };
    expect(listed.environments.find((e) => e.id === row.id)?.daytona?.credential.variable).toBe(VARIABLE);
  });

  it("creates a local environment without a config (the provider's defaults) for the company named by its id, text output naming the next step", async () => {
    const run = await cli(["environment", "create", "--company", companyId, "--name", "local", "--provider", "local"], false);
    expect(run.code, run.stderr).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/environment local \(local, [0-9a-f-]{36}\) created/);
    expect(run.stdout).toContain("copyback agent set-environment --agent AGENT_ID --environment");
    const row = await db.prisma().environment.findFirstOrThrow({ where: { companyId, name: "local" } });
    expect(row).toMatchObject({ pluginId: "builtin.local", defaultLeasePolicy: "ephemeral", config: {} });
  });

  it("refuses each bad input with a clear code and writes nothing (no row, no activity), never echoing a key", async () => {
    const before = await written();
    const cases: [string, string[], number, string][] = [
      ["key in config", ["--provider", "daytona", "--config", await file("key.json", JSON.stringify({ apiKeyEnv: VARIABLE, apiKey: SECRET }))], EXIT.usage, "provider_config_holds_key"],
      ["key deep in config", ["--provider", "local", "--config", await file("deep.json", JSON.stringify({ env: { OPENAI_API_KEY: SECRET } }))], EXIT.usage, "provider_config_holds_key"],
      ["variable not DAYTONA_", ["--provider", "daytona", "--config", await file("var.json", JSON.stringify({ apiKeyEnv: "DATABASE_URL" }))], EXIT.usage, "provider_config_invalid"],
      ["snapshot and image", ["--provider", "daytona", "--config", await file("both.json", JSON.stringify({ snapshot: "a", image: "b" }))], EXIT.usage, "provider_config_invalid"],
      ["not JSON", ["--provider", "daytona", "--config", await file("broken.json", `{"apiKey": "${SECRET}",`)], EXIT.usage, "invalid_request"],
      ["not an object", ["--provider", "local", "--config", await file("array.json", "[1]")], EXIT.usage, "provider_config_invalid"],
      ["missing file", ["--provider", "local", "--config", path.join(dir, "absent.json")], EXIT.usage, "input_unreadable"],
      ["unknown provider", ["--provider", "kubernetes"], EXIT.usage, "provider_unknown"],
      ["no built-in plugin", ["--provider", "railway"], EXIT.usage, "provider_unsupported"],
      ["bad lease policy", ["--provider", "local", "--lease-policy", "forever"], EXIT.usage, "lease_policy_invalid"],
      ["taken name", ["--provider", "local"], EXIT.failed, "environment_name_taken"],
    ];
    for (const [what, args, exit, code] of cases) {
      const name = what === "taken name" ? "daytona" : `refused-${what.replace(/\W/g, "-")}`;
      const run = await cli(["environment", "create", "--company", companyId, "--name", name, ...args]);
      expect(run.code, what).toBe(exit);
      expect((parseJson(run) as { error: { code: string } }).error.code, what).toBe(code);
      expect(run.stdout + run.stderr, what).not.toContain(SECRET);
    }
    const blank = await cli(["environment", "create", "--company", companyId, "--name", "   ", "--provider", "local"]);
    expect((parseJson(blank) as { error: { code: string } }).error.code).toBe("environment_name_invalid");
    expect(await written()).toEqual(before);
  });

  it("names the key variable's field, not the key, in the text answer too", async () => {
    const run = await cli(["environment", "create", "--company", companyId, "--name", "x", "--provider", "daytona", "--config", await file("key2.json", JSON.stringify({ token: SECRET }))], false);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain("token");
    expect(run.stderr).toContain("apiKeyEnv");
    expect(run.stdout + run.stderr).not.toContain(SECRET);
  });

  it("refuses an unknown company (id or prefix), an ambiguous prefix and a missing required option, writing nothing", async () => {
    const before = await written();
    const unknownId = await cli(["environment", "create", "--company", "00000000-0000-4000-8000-000000000000", "--name", "n", "--provider", "local"]);
    expect(unknownId.code).toBe(EXIT.failed);
    expect((parseJson(unknownId) as { error: { code: string } }).error.code).toBe("company_not_found");
    const unknownPrefix = await cli(["environment", "create", "--company", "NO-SUCH-PREFIX", "--name", "n", "--provider", "local"]);
    expect((parseJson(unknownPrefix) as { error: { code: string } }).error.code).toBe("company_not_found");

    const twin = await db.prisma().company.create({ data: { name: `twin ${prefix}`, issuePrefix: prefix } });
    try {
      const ambiguous = await cli(["environment", "create", "--company", prefix, "--name", "n", "--provider", "local"]);
      expect(ambiguous.code).toBe(EXIT.usage);
      const error = (parseJson(ambiguous) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe("company_ambiguous");
      expect(error.message).toContain(twin.id);
      expect(await db.prisma().environment.count({ where: { companyId: twin.id } })).toBe(0);
    } finally {
      await db.prisma().company.delete({ where: { id: twin.id } });
    }
    const noName = await cli(["environment", "create", "--company", companyId, "--provider", "local"]);
    expect(noName.code).toBe(EXIT.usage);
    expect(await written()).toEqual(before);
  });

  it("two creators of one name at once: exactly one environment, the other refused environment_name_taken", async () => {
    const attempt = () => createEnvironment(db.prisma(), { companyId, name: "raced", provider: "local", actor: SYSTEM_ACTOR }).then(() => "created", (e: { code?: string }) => e.code);
    const outcomes = await Promise.all([attempt(), attempt(), attempt()]);
    expect(outcomes.filter((o) => o === "created")).toHaveLength(1);
    expect(outcomes.filter((o) => o === "environment_name_taken")).toHaveLength(2);
    expect(await db.prisma().environment.count({ where: { companyId, name: "raced" } })).toBe(1);
    expect(await db.prisma().activityLog.count({ where: { companyId, action: "environment.created", details: { path: ["name"], equals: "raced" } } })).toBe(1);
  });
});
