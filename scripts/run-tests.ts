// `npm test` ends here: every tier against one PostgreSQL server, then one summary line.
//   unit         vitest `*.test.ts` in every package
//   integration  vitest `*.integration-test.ts`, a fresh database per test file
//   e2e          Playwright in Debian chromium against the launched console and worker
//   torture      the torture suite's short run (torture/): a fixed seed and a
//                random one (printed for replay), 90 s of faults each; any violation fails it
// The server: COPYBACK_TEST_DATABASE_URL or DATABASE_URL when set, else an embedded PostgreSQL
// on a private temporary instance root (removed afterwards), as on a fresh machine (CI takes that
// path too). Each tier runs as a child awaited asynchronously: this process keeps its event loop
// free for the whole run, whatever it owns (the embedded server writes its log to files anyway).
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import net from "node:net";
import pg from "pg";
import { resolveDatabase } from "@copyback/db";
import { add, countPlaywright, countVitest, emptyCounts, readJson, skippedVitest, workspaceReportFiles, type SkippedTest, type TierCounts } from "./tests/reports";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const say = (m: string) => process.stdout.write(`\n[copyback test] ${m}\n`);
const turbo = path.join(root, "node_modules/.bin/turbo");

async function step(name: string, command: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<boolean> {
  say(name);
  const started = Date.now();
  const child = spawn(command, args, { cwd: opts.cwd ?? root, env: { ...process.env, ...opts.env }, stdio: "inherit" });
  const status = await new Promise<string | number>((resolve) => {
    child.once("error", (error) => resolve(error.message));
    child.once("exit", (code, signal) => resolve(code ?? signal ?? "?"));
  });
  const ok = status === 0;
  say(`${name}: ${ok ? "ok" : `FAILED (${status})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return ok;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function withAdmin<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function main(): Promise<number> {
  const only = process.argv.slice(2).filter((a) => !a.startsWith("-"));
  const wants = (tier: string) => only.length === 0 || only.includes(tier);
  const external = process.env.COPYBACK_TEST_DATABASE_URL ?? process.env.DATABASE_URL;
  let tmpHome: string | undefined;
  let database: { url: string; stop(): Promise<void> };
  if (external) {
    say("using the PostgreSQL server from COPYBACK_TEST_DATABASE_URL / DATABASE_URL");
    database = { url: external, stop: async () => {} };
  } else {
    tmpHome = fs.mkdtempSync(path.join(os.tmpdir(), "copyback-test-home-"));
    say(`no DATABASE_URL: starting an embedded PostgreSQL under ${tmpHome}`);
    database = await resolveDatabase({ instanceRoot: tmpHome, port: await freePort(), migrate: false });
  }
  const testEnv = { COPYBACK_TEST_DATABASE_URL: database.url };
  // DATABASE_URL must not leak into tests as "the" database: every test makes its own.
  delete process.env.DATABASE_URL;

  const results: Record<string, TierCounts> = {};
  const skipped: SkippedTest[] = [];
  const failedSteps: string[] = [];
  try {
    for (const dir of ["apps", "packages"]) {
      for (const pkg of fs.readdirSync(path.join(root, dir))) fs.rmSync(path.join(root, dir, pkg, ".reports"), { recursive: true, force: true });
    }
    fs.rmSync(path.join(root, "e2e/.reports"), { recursive: true, force: true });

    if (wants("static")) {
      if (!(await step("typecheck", turbo, ["run", "typecheck", "--env-mode=loose", "--continue", "--output-logs=errors-only"]))) failedSteps.push("typecheck");
      if (!(await step("typecheck scripts", path.join(root, "node_modules/.bin/tsc"), ["-p", "scripts/tsconfig.json"]))) failedSteps.push("typecheck scripts");
      if (!(await step("ownership model (model/check.mjs: Quint, bounded samples)", process.execPath, [path.join(root, "model/check.mjs")]))) failedSteps.push("ownership model");
      if (!(await step("lint", turbo, ["run", "lint", "--env-mode=loose", "--continue", "--output-logs=errors-only"]))) failedSteps.push("lint");
    }
    for (const tier of ["unit", "integration"] as const) {
      if (!wants(tier)) continue;
      const ok = await step(`${tier} tests`, turbo, [
        "run", `test:${tier}`, "--env-mode=loose", "--continue", "--concurrency=2", "--",
        "--reporter=default", "--reporter=json", `--outputFile.json=.reports/${tier}.json`,
      ], { env: testEnv });
      if (!ok) failedSteps.push(`${tier} tests`);
      const reports = workspaceReportFiles(root, `${tier}.json`).map((f) => readJson(f));
      results[tier] = reports.map((r) => countVitest(r)).reduce(add, emptyCounts());
      skipped.push(...reports.flatMap((r) => skippedVitest(r)));
    }
    if (wants("e2e")) {
      // One database per launcher: the local-mode and the authenticated-mode console.
      const e2eDbs = [`copyback_e2e_${process.pid}_${Date.now()}`, `copyback_e2e_auth_${process.pid}_${Date.now()}`];
      for (const name of e2eDbs) await withAdmin(database.url, (c) => c.query(`CREATE DATABASE ${name}`));
      try {
        if (!(await step("build the console", turbo, ["run", "build", "--filter=@copyback/web", "--env-mode=loose", "--output-logs=errors-only"]))) failedSteps.push("build");
        const ok = await step("e2e tests", path.join(root, "e2e/node_modules/.bin/playwright"), ["test"], {
          cwd: path.join(root, "e2e"),
          env: {
            E2E_DATABASE_URL: withDatabase(database.url, e2eDbs[0]!),
            E2E_AUTH_DATABASE_URL: withDatabase(database.url, e2eDbs[1]!),
            E2E_PORT: String(await freePort()),
            E2E_WORKER_HEALTH_PORT: String(await freePort()),
            E2E_AUTH_PORT: String(await freePort()),
            E2E_AUTH_WORKER_HEALTH_PORT: String(await freePort()),
          },
        });
        if (!ok) failedSteps.push("e2e tests");
        const report = readJson(path.join(root, "e2e/.reports/e2e.json"));
        results.e2e = report ? countPlaywright(report) : emptyCounts();
      } finally {
        for (const name of e2eDbs) await withAdmin(database.url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
      }
    }
    if (wants("torture")) {
      // A fixed seed (the same history every time) and a random one (new histories; replay it
      // with the seed printed here). Each counts as one test in the summary. Each owns an embedded
      // server (--embedded), so its PostgreSQL restarts are injected whatever server the other
      // tiers used.
      const counts = emptyCounts();
      const randomSeed = Math.floor(Math.random() * 2 ** 31);
      for (const seed of [1, randomSeed]) {
        const ok = await step(`torture seed ${seed} (replay: pnpm torture -- --seed ${seed} --minutes 1.5 --embedded)`, path.join(root, "node_modules/.bin/tsx"), [path.join(root, "torture/src/main.ts"), "--seed", String(seed), "--minutes", "1.5", "--embedded"]);
        if (ok) counts.passed += 1;
        else {
          counts.failed += 1;
          failedSteps.push(`torture seed ${seed}`);
        }
      }
      results.torture = counts;
    }
  } finally {
    await database.stop();
    if (tmpHome) fs.rmSync(tmpHome, { recursive: true, force: true });
  }

  const total = Object.values(results).reduce(add, emptyCounts());
  say("summary");
  for (const [tier, c] of Object.entries(results)) {
    process.stdout.write(`  ${tier.padEnd(12)} ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped\n`);
  }
  // Skipped tests that said why (meta.skipReason) are named, so a skip is never read as a pass.
  for (const test of skipped.filter((t) => t.reason !== null)) process.stdout.write(`  skipped: ${test.name} (${test.reason})\n`);
  if (failedSteps.length) process.stdout.write(`  failed steps: ${failedSteps.join(", ")}\n`);
  process.stdout.write(`tests: ${total.passed} passed, ${total.failed} failed\n`);
  // Zero tests counted fails a run of test tiers (a reporter that wrote nothing is not a pass); the
  // static tier alone counts none and is judged by its steps.
  const ranTestTiers = Object.keys(results).length > 0;
  return failedSteps.length === 0 && total.failed === 0 && (total.passed > 0 || !ranTestTiers) ? 0 : 1;
}

process.exitCode = await main();
