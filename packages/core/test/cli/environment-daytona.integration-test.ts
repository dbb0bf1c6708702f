// Issue 21: `copyback environment list|configure` for a daytona environment, against a real
// PostgreSQL: the configuration as the provider's zod schema reads it, the key variable's NAME and
// whether it is set in this process (never its value), the last dispatch refused for its key
// (records/credential-refusals.ts), and a configuration that carries a key refused, writing nothing.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { parseJson, runCli } from "./helpers";

const db = useTestDatabase();
const VARIABLE = "DAYTONA_CLI_LIST_TEST_KEY";
const SECRET = "dtn_cli_list_secret_value_42";
let dir = "";
let companyId = "";
let daytona = "";

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "copyback-cli-daytona-"));
  const prisma = db.prisma();
  const company = await prisma.company.create({ data: { name: `CLI daytona ${path.basename(dir)}`, issuePrefix: "DCL" } });
  companyId = company.id;
  daytona = (
    await prisma.environment.create({
      data: { companyId, name: "dt", provider: "daytona", pluginId: "builtin.daytona", config: { apiKeyEnv: VARIABLE, target: "eu", labels: { team: "a" } } },
    })
  ).id;
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  delete process.env[VARIABLE];
});

const cli = (argv: string[], json = true) => runCli(json ? ["--json", ...argv] : argv, { databaseUrl: db.url(), copybackHome: dir });
type Listed = { id: string; daytona: { configuration: Record<string, unknown>; credential: { variable: string; set: boolean }; lastCredentialRefusal: Record<string, unknown> | null } | null };

describe("copyback environment (daytona)", () => {
  it("list shows the validated daytona configuration (defaults applied) and the key variable's NAME, not set, then set, never its value", async () => {
    const before = parseJson(await cli(["environment", "list"])) as { environments: Listed[] };
    const row = before.environments.find((e) => e.id === daytona)!;
    expect(row.daytona?.configuration).toMatchObject({ kind: "daytona", apiUrl: "https://app.daytona.io/api", target: "eu", apiKeyEnv: VARIABLE, labels: [{ key: "team", value: "a" }] });
    expect(row.daytona?.credential).toMatchObject({ variable: VARIABLE, set: false });
    expect(row.daytona?.lastCredentialRefusal).toBeNull();
    const text = await cli(["environment", "list"], false);
    expect(text.stdout).toContain(`API key variable ${VARIABLE} not set`);

    process.env[VARIABLE] = SECRET;
    const after = await cli(["environment", "list"]);
    expect((parseJson(after) as { environments: Listed[] }).environments.find((e) => e.id === daytona)?.daytona?.credential).toMatchObject({ set: true });
    const afterText = await cli(["environment", "list"], false);
    expect(afterText.stdout).toContain(`API key variable ${VARIABLE} set`);
    expect(after.stdout + afterText.stdout).not.toContain(SECRET);
  });

  it("list shows the last dispatch refused for the environment's key (code, variable, run)", async () => {
    const prisma = db.prisma();
    const agent = await prisma.agent.create({ data: { companyId, name: "dt-agent", command: ["/bin/true"], environmentId: daytona } });
    const issue = await prisma.issue.create({ data: { companyId, number: 1, identifier: "DCL-1", title: "t", status: "blocked" } });
    const run = await prisma.heartbeatRun.create({
      data: { companyId, agentId: agent.id, nativeIssueId: issue.id, status: "failed", errorCode: "provider_credentials_rejected", errorMessage: "rejected" },
    });
    await prisma.runEvent.create({
      data: { companyId, runId: run.id, level: "error", code: "environment.credentials_refused", message: `Daytona rejected the API key in the environment variable ${VARIABLE}`, payload: { code: "provider_credentials_rejected", variable: VARIABLE, environmentId: daytona } },
    });
    const listed = (parseJson(await cli(["environment", "list"])) as { environments: Listed[] }).environments.find((e) => e.id === daytona);
    expect(listed?.daytona?.lastCredentialRefusal).toMatchObject({ runId: run.id, code: "provider_credentials_rejected", variable: VARIABLE });
    const text = await cli(["environment", "list"], false);
    expect(text.stdout).toContain(`last dispatch refused`);
    expect(text.stdout).toContain(run.id);
  });

  it("configure validates a daytona configuration with its schema, says the key variable's state, and refuses a key in the file, writing nothing", async () => {
    const good = path.join(dir, "good.json");
    await writeFile(good, JSON.stringify({ apiKeyEnv: VARIABLE, snapshot: "copyback-agent", autoStopMinutes: 30 }));
    const ok = await cli(["environment", "configure", daytona, "--config", good]);
    expect(ok.code).toBe(EXIT.ok);
    expect((parseJson(ok) as { credential: unknown }).credential).toMatchObject({ variable: VARIABLE, set: false });
    expect((await cli(["environment", "configure", daytona, "--config", good], false)).stdout).toContain(`API key variable ${VARIABLE}: not set`);
    const stored = (await db.prisma().environment.findUniqueOrThrow({ where: { id: daytona } })).config;

    for (const [name, config] of [
      ["key.json", { apiKeyEnv: VARIABLE, apiKey: SECRET }],
      ["bad-var.json", { apiKeyEnv: "DATABASE_URL" }],
      ["both.json", { snapshot: "a", image: "b" }],
    ] as const) {
      const file = path.join(dir, name);
      await writeFile(file, JSON.stringify(config));
      const refused = await cli(["environment", "configure", daytona, "--config", file]);
      expect(refused.code, name).not.toBe(EXIT.ok);
      expect(refused.stdout + refused.stderr).not.toContain(SECRET);
    }
    expect((await db.prisma().environment.findUniqueOrThrow({ where: { id: daytona } })).config).toEqual(stored);
  });
});
