// Server CPU per request of console variants, compared in interleaved rounds. On a
// shared machine the CPU time a request costs drifts by ±15% from one minute to the next, so
// two separate benchmark runs cannot show a 5% change; this starts the built console once per
// variant per round, one `next start` process, and drives the same requests against each in turn.
//
//   BENCH_VARIANTS='[{"COPYBACK_WEB_COMPRESSION":"on"},{"COPYBACK_WEB_COMPRESSION":"off"}]' \
//     .tools/node_modules/.bin/pnpm tsx bench/console-variants.ts
//
// Each variant is the environment the console starts with on top of the benchmark's (NODE_OPTIONS
// works for V8 flags such as --max-semi-space-size). Knobs: BENCH_ISSUES (20000), BENCH_ROUNDS (4),
// BENCH_REQUESTS (200 per variant per round, round the first board page, two filters and the issue
// page, after 20 warm-up requests). Prints each round's figure and the mean; asserts nothing.
import os from "node:os";
import { createBenchDatabase } from "./lib/bench-database";
import { consoleBuilt, startConsole } from "./lib/console-server";
import { seedIssues } from "./lib/issue-seed";

const ISSUES = Number(process.env.BENCH_ISSUES ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const WARMUP = 20;
const variants = JSON.parse(process.env.BENCH_VARIANTS ?? '[{"COPYBACK_WEB_COMPRESSION":"on"},{"COPYBACK_WEB_COMPRESSION":"off"}]') as Record<string, string>[];

async function main(): Promise<void> {
  if (!consoleBuilt()) throw new Error("build the console first: turbo run build --filter=@copyback/web");
  const database = await createBenchDatabase("console_variants");
  try {
    const { companyId, issueId } = await seedIssues(database.url, ISSUES);
    const figures = variants.map(() => [] as number[]);
    console.log(`${ISSUES} issues, ${ROUNDS} rounds of ${REQUESTS} requests per variant, load average ${os.loadavg()[0]!.toFixed(1)}`);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [index, env] of variants.entries()) {
        const server = await startConsole(database.url, { ...env, COPYBACK_WEB_WORKERS: "1" });
        try {
          const board = `${server.base}/companies/${companyId}/issues`;
          const pages = [board, `${board}?status=todo`, `${board}?status=in_progress&assignee=unassigned`, `${board}/${issueId}`];
          const get = async (i: number) => {
            const response = await fetch(pages[i % pages.length]!, { headers: { cookie: server.cookie } });
            await response.text();
            if (response.status !== 200) throw new Error(`${pages[i % pages.length]}: HTTP ${response.status}`);
          };
          for (let i = 0; i < WARMUP; i++) await get(i);
          const before = server.cpuMs();
          for (let i = 0; i < REQUESTS; i++) await get(i);
          figures[index]!.push((server.cpuMs() - before) / REQUESTS);
        } finally {
          await server.stop();
        }
      }
    }
    for (const [index, env] of variants.entries()) {
      const runs = figures[index]!;
      const mean = runs.reduce((a, b) => a + b, 0) / runs.length;
      console.log(`${JSON.stringify(env).padEnd(50)} server CPU ${runs.map((x) => x.toFixed(1)).join(" / ")} ms/request, mean ${mean.toFixed(1)}`);
    }
    console.log(`load average after: ${os.loadavg().map((l) => l.toFixed(1)).join(" / ")}`);
  } finally {
    await database.drop();
  }
}

await main();
