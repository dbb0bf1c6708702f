// Benchmark: server response time of the issues board and an issue page, sequentially and under
// N concurrent readers. Prints figures and the target; asserts nothing.
//
//   pnpm bench:issue-page            (build the console first: turbo run build --filter=@copyback/web)
//
// It creates a fresh database on COPYBACK_TEST_DATABASE_URL (or the local PostgreSQL at
// postgresql://postgres@127.0.0.1:5432/postgres), migrates it, inserts one company with
// BENCH_ISSUES issues, starts the built console (`next start`, local mode, signed in as the local
// board) on a free port, and times complete GET responses (headers and HTML body):
//   1. each page, sequentially (BENCH_REQUESTS each after BENCH_WARMUP warm-up requests);
//   2. BENCH_READERS readers at once, each issuing requests back to back over the board's first
//      page, a filtered page, page 21 (keyset) and the issue page in turn, at least
//      BENCH_READER_REQUESTS each and for at least BENCH_CONCURRENT_SECONDS (so that the writer
//      below makes its changes however fast the answers come):
//      target p95 < 150 ms at 100,000 issues (printed as PASS/MISS; with fewer issues it is only
//      indicative). Meanwhile a writer changes BENCH_CHANGES_PER_SECOND (5) issues of the company a
//      second (title and last activity: each moves to the top of the first page; every fifth the
//      issue the issue page shows, the others random), so the console's render cache
//      (apps/web/scripts/render-cache.mjs) is dropped as in real use; every first-page answer must
//      show the change committed last before its request started, every issue-page answer the
//      last change of its issue, and the cache's hits are printed (from each answer's
//      x-copyback-render-cache header);
//   3. the same concurrent phase on a console started with the render cache off
//      (COPYBACK_WEB_RENDER_CACHE=off), for comparison (BENCH_CACHE_OFF_RUN=0 skips it).
// The database is dropped at the end unless BENCH_KEEP_DATABASE=1.
//
// Knobs: BENCH_ISSUES (100000), BENCH_REQUESTS (50), BENCH_WARMUP (5), BENCH_READERS (20),
// BENCH_READER_REQUESTS (25), BENCH_CONCURRENT_SECONDS (10), BENCH_CHANGES_PER_SECOND (5),
// BENCH_CACHE_OFF_RUN (1).
import os from "node:os";
import pg from "pg";
import { createBenchDatabase } from "./lib/bench-database";
import { consoleBuilt, startConsole, type ConsoleServer } from "./lib/console-server";
import { seedIssues } from "./lib/issue-seed";

const ISSUES = Number(process.env.BENCH_ISSUES ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const READERS = Number(process.env.BENCH_READERS ?? 20);
const READER_REQUESTS = Number(process.env.BENCH_READER_REQUESTS ?? 25);
const CHANGES_PER_SECOND = Number(process.env.BENCH_CHANGES_PER_SECOND ?? 5);
const CONCURRENT_SECONDS = Number(process.env.BENCH_CONCURRENT_SECONDS ?? 10);
const CACHE_OFF_RUN = process.env.BENCH_CACHE_OFF_RUN !== "0";
const TARGET_P95_MS = 150;
const TARGET_ISSUES = 100_000;

const say = (line: string) => process.stdout.write(`${line}\n`);
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(" / ");

let server: ConsoleServer;

/** GET `path` on the current server. */
async function timeGet(path: string): Promise<{ ms: number; status: number; body: string; cache: string | null }> {
  const started = performance.now();
  const response = await fetch(`${server.base}${path}`, { redirect: "manual", headers: { cookie: server.cookie } });
  const body = await response.text();
  return { ms: performance.now() - started, status: response.status, body, cache: response.headers.get("x-copyback-render-cache") };
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
  /**
   * Which of the writer's changes committed before the request started the answer must show (or
   * a later one of the same list, which the render may have read): the last one (the first page),
   * or the last one of the issue the issue page shows.
   */
  showsChange?: "latest" | "shown issue";
}

/**
 * Changes `perSecond` issues a second until stopped: a new title and the latest activity, so the
 * issue moves to the top of the first page; every fifth change is to the issue the issue page
 * shows (someone works on the task a reader has open), the others to random issues. `titles` are
 * the titles of the committed changes in order, `shownTitles` those of the shown issue.
 */
function startWriter(databaseUrl: string, companyId: string, shownIssueId: string, issues: number, perSecond: number) {
  const state = { titles: [] as string[], shownTitles: [] as string[], changes: 0, stopped: false };
  if (perSecond <= 0) return { state, stop: async () => {} };
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "copyback-bench-writer" });
  const done = (async () => {
    await client.connect();
    const started = performance.now();
    while (!state.stopped) {
      const shown = state.changes % 5 === 4;
      const number = 1 + Math.floor(Math.random() * issues);
      const title = `Changed by the benchmark #${state.changes + 1} (${shown ? "the shown issue" : number})`;
      if (shown) await client.query("UPDATE issues SET title = $1, last_activity_at = now() WHERE id = $2", [title, shownIssueId]);
      else await client.query("UPDATE issues SET title = $1, last_activity_at = now() WHERE company_id = $2 AND number = $3", [title, companyId, number]);
      state.titles.push(title);
      if (shown) state.shownTitles.push(title);
      state.changes++;
      const due = started + (state.changes * 1000) / perSecond;
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    }
    await client.end();
  })();
  return {
    state,
    stop: async () => {
      state.stopped = true;
      await done;
    },
  };
}

/** Server CPU (its whole process group) per request over `requests` requests since `cpuBefore`. */
const cpuPerRequest = (cpuBefore: number, requests: number) => `server CPU ${((server.cpuMs() - cpuBefore) / requests).toFixed(1)} ms/request`;

async function measure(page: Page): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await timeGet(page.url);
  const cpuBefore = server.cpuMs();
  const times: number[] = [];
  let hits = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const { ms, status, body, cache } = await timeGet(page.url);
    if (status !== 200 || !page.check(body)) throw new Error(`${page.label}: unexpected answer (HTTP ${status})`);
    if (cache === "hit") hits++;
    times.push(ms);
  }
  say(`${page.label.padEnd(34)} ${summary(times)}  ${cpuPerRequest(cpuBefore, times.length)}, ${hits} cache hits`);
}

interface ConcurrentResult {
  times: number[];
  hits: number;
  shared: number;
  misses: number;
}

/** READERS readers at once, each going round the pages; every answer checked. */
async function concurrentReaders(pages: Page[], writer: { titles: string[]; shownTitles: string[] }): Promise<ConcurrentResult> {
  const result: ConcurrentResult = { times: [], hits: 0, shared: 0, misses: 0 };
  const failures: string[] = [];
  const until = performance.now() + CONCURRENT_SECONDS * 1000;
  await Promise.all(
    Array.from({ length: READERS }, async (_, reader) => {
      for (let i = 0; i < READER_REQUESTS || performance.now() < until; i++) {
        const page = pages[(reader + i) % pages.length]!;
        const changes = page.showsChange === "latest" ? writer.titles : page.showsChange === "shown issue" ? writer.shownTitles : [];
        const from = changes.length - 1;
        const { ms, status, body, cache } = await timeGet(page.url);
        if (status !== 200 || !page.check(body)) failures.push(`${page.label}: HTTP ${status}`);
        // A stale answer shows none of the changes from the last one committed before it was asked for.
        else if (from >= 0 && !changes.slice(from).some((title) => body.includes(title))) failures.push(`${page.label}: stale (without "${changes[from]}" or a later change, render cache ${cache})`);
        if (cache === "hit") result.hits++;
        else if (cache === "shared") result.shared++;
        else if (cache === "miss") result.misses++;
        result.times.push(ms);
      }
    }),
  );
  if (failures.length > 0) throw new Error(`${failures.length} bad answers under concurrency, e.g. ${failures[0]}`);
  return result;
}

/** The concurrent phase with the writer running; prints its lines and returns the p95. */
async function concurrentPhase(pages: Page[], databaseUrl: string, companyId: string, issueId: string, label: string): Promise<number> {
  say(`\nconcurrent (${label}, ${server.workers} × Next.js): ${READERS} readers at once, round the five pages, ${READER_REQUESTS} requests each and ${CONCURRENT_SECONDS} s at least; ${CHANGES_PER_SECOND} issue changes/s; load average ${load()}`);
  const writer = startWriter(databaseUrl, companyId, issueId, ISSUES, CHANGES_PER_SECOND);
  // The first change committed before the readers start, so that every first page is checked.
  while (CHANGES_PER_SECOND > 0 && writer.state.titles.length === 0) await new Promise((r) => setTimeout(r, 10));
  const started = performance.now();
  const cpuBefore = server.cpuMs();
  const benchCpu = process.cpuUsage();
  let result: ConcurrentResult;
  try {
    result = await concurrentReaders(pages, writer.state);
  } finally {
    await writer.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const benchUsed = process.cpuUsage(benchCpu);
  const benchCpuMs = (benchUsed.user + benchUsed.system) / 1000;
  const { times } = result;
  const p95 = percentile([...times].sort((a, b) => a - b), 95);
  say(`${"all pages".padEnd(34)} ${summary(times)}  (${times.length} requests, ${(times.length / seconds).toFixed(0)} req/s)`);
  // CPU time is what the load of other processes inflates least: what a quiet machine must spend.
  say(`${"".padEnd(34)} ${cpuPerRequest(cpuBefore, times.length)}, this benchmark's client ${(benchCpuMs / times.length).toFixed(1)} ms/request`);
  const cacheable = result.hits + result.shared + result.misses;
  const pct = (n: number) => `${((100 * n) / cacheable).toFixed(0)}%`;
  say(
    `${"".padEnd(34)} render cache: ${cacheable === 0 ? "off (no answer was cacheable)" : `of ${cacheable} cacheable answers ${result.hits} hits (${pct(result.hits)}), ${result.shared} shared a render under way (${pct(result.shared)}), ${result.misses} rendered (${pct(result.misses)})`}; ${writer.state.changes} changes written`,
  );
  return p95;
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

    const board = `/companies/${companyId}/issues`;
    // Twenty "Next page" hops from the first page: the 21st page's URL.
    let deep = board;
    for (let hop = 0; hop < 20; hop++) {
      const next = nextPageHref((await timeGet(deep)).body);
      if (!next) throw new Error("the board has no next page (fewer than 21 pages of issues?)");
      deep = next;
    }
    const rows = (body: string) => body.includes('data-testid="issue-row"');
    const pages: Page[] = [
      { label: "issues board (first page)", url: board, check: rows, showsChange: "latest" },
      { label: "issues board ?status=todo", url: `${board}?status=todo`, check: rows },
      { label: "issues board, filter + assignee", url: `${board}?status=in_progress&assignee=unassigned`, check: rows },
      { label: "issues board, page 21 (keyset)", url: deep, check: rows },
      { label: "issue page (30 messages, 5 runs)", url: `${board}/${issueId}`, check: (body) => body.includes('data-testid="conversation"'), showsChange: "shown issue" },
    ];

    const cacheOn = process.env.COPYBACK_WEB_RENDER_CACHE !== "off";
    say(`\n${server.workers} × Next.js (production build, apps/web/scripts/serve.mjs, render cache ${cacheOn ? "on" : "off"}), local mode, ${ISSUES} issues, ${os.availableParallelism()} CPUs, load average ${load()}`);
    say(`sequential: ${REQUESTS} requests each after ${WARMUP} warm-up requests`);
    for (const page of pages) await measure(page);

    const p95 = await concurrentPhase(pages, database.url, companyId, issueId, "as configured");
    const verdict = p95 < TARGET_P95_MS ? "PASS" : "MISS";
    say(
      ISSUES >= TARGET_ISSUES
        ? `target: p95 < ${TARGET_P95_MS} ms with ${READERS} readers at ${TARGET_ISSUES} issues: ${f(p95).trim()} ${verdict}`
        : `target: p95 < ${TARGET_P95_MS} ms with ${READERS} readers at ${TARGET_ISSUES} issues: not measured (${ISSUES} issues; ${f(p95).trim()} here, ${verdict} only indicative)`,
    );
    if (CACHE_OFF_RUN) {
      await server.stop();
      server = await startConsole(database.url, { COPYBACK_WEB_RENDER_CACHE: "off" });
      // Warm-up as the first server had (the sequential phase): each page as often.
      for (const page of pages) for (let i = 0; i < WARMUP + REQUESTS; i++) await timeGet(page.url);
      const offP95 = await concurrentPhase(pages, database.url, companyId, issueId, "render cache off, for comparison");
      say(`${"".padEnd(34)} p95 ${f(offP95).trim()} with the render cache off`);
    }
    say(`load average after: ${load()}`);
  } finally {
    await server?.stop();
    await database.drop();
  }
}

await main();
