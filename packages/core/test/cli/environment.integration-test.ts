// `copyback environment list|configure` against a real PostgreSQL: the rehearsal faults of
// README "Rehearsing recovery" set on a real install, checked by the provider's own schema; a
// refused change (bad JSON, a misspelled fault, an unknown environment, conflicting flags)
// writes nothing.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { EXIT } from "../../src/cli/exit-codes";
import { parseFakeConfig } from "../../src/providers/fake/config";
import { parseLocalConfig } from "../../src/providers/local/config";
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
