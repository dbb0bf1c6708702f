// Benchmark: server response time of the issues board and an issue page, sequentially and under
// N concurrent readers (issue 14 section 1). Prints figures and the target; asserts nothing.
//
//   pnpm bench:issue-page            (build the console first: turbo run build --filter=@copyback/web)
//
// It creates a fresh database on COPYBACK_TEST_DATABASE_URL (or the local PostgreSQL at
// postgresql://postgres@127.0.0.1:5432/postgres), migrates it, inserts one company with
// BENCH_ISSUES issues, starts the built console (`next start`, local mode, signed in as the local
// board) on a free port, and times complete GET responses (headers and HTML body):
//   1. each page, sequentially (BENCH_REQUESTS each after BENCH_WARMUP warm-up requests);
//   2. BENCH_READERS readers at once, each issuing BENCH_READER_REQUESTS requests back to back over
//      the board's first page, a filtered page, page 21 (keyset) and the issue page in turn:
//      target p95 < 150 ms at 100,000 issues (printed as PASS/MISS; with fewer issues it is only
//      indicative).
// The database is dropped at the end unless BENCH_KEEP_DATABASE=1.
//
// Knobs: BENCH_ISSUES (100000), BENCH_REQUESTS (50), BENCH_WARMUP (5), BENCH_READERS (20),
// BENCH_READER_REQUESTS (25).
import os from "node:os";
import { createBenchDatabase } from "./lib/bench-database";
import { consoleBuilt, startConsole, type ConsoleServer } from "./lib/console-server";
import { seedIssues } from "./lib/issue-seed";

const ISSUES = Number(process.env.BENCH_ISSUES ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const READERS = Number(process.env.BENCH_READERS ?? 20);
const READER_REQUESTS = Number(process.env.BENCH_READER_REQUESTS ?? 25);
const TARGET_P95_MS = 150;
const TARGET_ISSUES = 100_000;

const say = (line: string) => process.stdout.write(`${line}\n`);
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(" / ");

let server: ConsoleServer;

async function timeGet(url: string): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  const response = await fetch(url, { redirect: "manual", headers: { cookie: server.cookie } });
  const body = await response.text();
  return { ms: performance.now() - started, status: response.status, body };
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

const f = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;

function summary(times: number[]): string {
  const sorted = [...times].sort((a, b) => a - b);
  const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
  return `p50 ${f(percentile(sorted, 50))}  p95 ${f(percentile(sorted, 95))}  p99 ${f(percentile(sorted, 99))}  mean ${f(mean)}  max ${f(sorted.at(-1)!)}`;
}

interface Page {
  label: string;
  url: string;
  check: (body: string) => boolean;
}

/** Server CPU (its whole process group) per request over `requests` requests since `cpuBefore`. */
const cpuPerRequest = (cpuBefore: number, requests: number) => `server CPU ${((server.cpuMs() - cpuBefore) / requests).toFixed(1)} ms/request`;

async function measure(page: Page): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await timeGet(page.url);
  const cpuBefore = server.cpuMs();
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const { ms, status, body } = await timeGet(page.url);
    if (status !== 200 || !page.check(body)) throw new Error(`${page.label}: unexpected answer (HTTP ${status})`);
    times.push(ms);
  }
  say(`${page.label.padEnd(34)} ${summary(times)}  ${cpuPerRequest(cpuBefore, times.length)}`);
}

/** READERS readers at once, each going round the pages; every answer checked. */
async function concurrentReaders(pages: Page[]): Promise<number[]> {
  const times: number[] = [];
  const failures: string[] = [];
  await Promise.all(
    Array.from({ length: READERS }, async (_, reader) => {
      for (let i = 0; i < READER_REQUESTS; i++) {
        const page = pages[(reader + i) % pages.length]!;
        const { ms, status, body } = await timeGet(page.url);
        if (status !== 200 || !page.check(body)) failures.push(`${page.label}: HTTP ${status}`);
        times.push(ms);
      }
    }),
  );
  if (failures.length > 0) throw new Error(`${failures.length} bad answers under concurrency, e.g. ${failures[0]}`);
  return times;
}

/** The "Next page" link of a board page (keyset cursor), HTML-unescaped. */
function nextPageHref(html: string): string | null {
  const anchor = /<a[^>]*data-testid="next-page"[^>]*>/.exec(html)?.[0];
  const href = anchor && /href="([^"]+)"/.exec(anchor)?.[1];
  return href ? href.replaceAll("&amp;", "&") : null;
}

async function main(): Promise<void> {
  if (!consoleBuilt()) {
    say("The console is not built: run `node_modules/.bin/turbo run build --filter=@copyback/web` first.");
    process.exitCode = 1;
    return;
  }
  const database = await createBenchDatabase("issue_page");
  try {
    say(`database ${database.name} on ${database.server}`);
    const seedStarted = performance.now();
    const { companyId, issueId } = await seedIssues(database.url, ISSUES);
    say(`inserted ${ISSUES} issues in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
    server = await startConsole(database.url);

    const board = `${server.base}/companies/${companyId}/issues`;
    // Twenty "Next page" hops from the first page: the 21st page's URL.
    let deep = board;
    for (let hop = 0; hop < 20; hop++) {
      const next = nextPageHref((await timeGet(deep)).body);
      if (!next) throw new Error("the board has no next page (fewer than 21 pages of issues?)");
      deep = `${server.base}${next}`;
    }
    const rows = (body: string) => body.includes('data-testid="issue-row"');
    const pages: Page[] = [
      { label: "issues board (first page)", url: board, check: rows },
      { label: "issues board ?status=todo", url: `${board}?status=todo`, check: rows },
      { label: "issues board, filter + assignee", url: `${board}?status=in_progress&assignee=unassigned`, check: rows },
      { label: "issues board, page 21 (keyset)", url: deep, check: rows },
      { label: "issue page (30 messages, 5 runs)", url: `${board}/${issueId}`, check: (body) => body.includes('data-testid="conversation"') },
    ];

    say(`\n${server.workers} × next start (production build, apps/web/scripts/serve.mjs), local mode, ${ISSUES} issues, ${os.availableParallelism()} CPUs, load average ${load()}`);
    say(`sequential: ${REQUESTS} requests each after ${WARMUP} warm-up requests`);
    for (const page of pages) await measure(page);

    say(`\nconcurrent: ${READERS} readers at once, ${READER_REQUESTS} requests each, round the five pages`);
    const started = performance.now();
    const cpuBefore = server.cpuMs();
    const benchCpu = process.cpuUsage();
    const times = await concurrentReaders(pages);
    const seconds = (performance.now() - started) / 1000;
    const benchUsed = process.cpuUsage(benchCpu);
    const benchCpuMs = (benchUsed.user + benchUsed.system) / 1000;
    const sorted = [...times].sort((a, b) => a - b);
    const p95 = percentile(sorted, 95);
    say(`${"all pages".padEnd(34)} ${summary(times)}  (${times.length} requests, ${(times.length / seconds).toFixed(0)} req/s)`);
    // CPU time is what the load of other processes inflates least: what a quiet machine must spend.
    say(`${"".padEnd(34)} ${cpuPerRequest(cpuBefore, times.length)}, this benchmark's client ${(benchCpuMs / times.length).toFixed(1)} ms/request`);
    const verdict = p95 < TARGET_P95_MS ? "PASS" : "MISS";
    say(
      ISSUES >= TARGET_ISSUES
        ? `target: p95 < ${TARGET_P95_MS} ms with ${READERS} readers at ${TARGET_ISSUES} issues: ${f(p95).trim()} ${verdict}`
        : `target: p95 < ${TARGET_P95_MS} ms with ${READERS} readers at ${TARGET_ISSUES} issues: not measured (${ISSUES} issues; ${f(p95).trim()} here, ${verdict} only indicative)`,
    );
    say(`load average after: ${load()}`);
  } finally {
    await server?.stop();
    await database.drop();
  }
}

await main();
