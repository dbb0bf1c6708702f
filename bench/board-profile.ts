// Where a board request's server CPU goes: starts the built console in ONE `next start`
// process under `node --cpu-prof`, drives BENCH_PROFILE_REQUESTS requests round the board's pages
// (first page, filtered, page 21 by keyset, issue page) with the local board's cookie, stops it and
// prints the profile's self time summed by function and by package/file, top 40 each. The
// .cpuprofile stays in BENCH_PROFILE_DIR (default a temporary directory) for a closer look.
//
//   pnpm tsx bench/board-profile.ts          (build the console first, as for bench:issue-page)
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createBenchDatabase } from "./lib/bench-database";
import { consoleBuilt, startConsole } from "./lib/console-server";
import { seedIssues } from "./lib/issue-seed";

const ISSUES = Number(process.env.BENCH_ISSUES ?? 20_000);
const REQUESTS = Number(process.env.BENCH_PROFILE_REQUESTS ?? 300);
const dir = process.env.BENCH_PROFILE_DIR ?? mkdtempSync(path.join(os.tmpdir(), "board-profile-"));

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The package (node_modules/<name>) or the file a frame's script belongs to. */
function ownerOf(url: string): string {
  if (!url) return "(native/vm)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + "node_modules/".length).split("/");
    const name = rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
    // Next.js's compiled vendored copies (react-dom server, etc.) are worth telling apart.
    const compiled = url.match(/next\/dist\/(compiled\/[^/]+|server\/[^/]+|client\/[^/]+)/);
    return compiled ? `${name}:${compiled[1]}` : name;
  }
  const chunk = url.match(/\.next\/server\/(.*)$/);
  return chunk ? `.next/server/${chunk[1]}` : url.replace(/^file:\/\//, "");
}

/** CLOCK_MONOTONIC in µs: the clock of V8's profile timestamps on Linux. */
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);

/** Self time by node over the samples taken in [from, to] (µs, monotonic): the driven requests, not start-up. */
function summarize(profile: Profile, from: number, to: number): void {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= from && at <= to) self.set(id, (self.get(id) ?? 0) + delta);
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const key = `${functionName || "(anonymous)"}  ${ownerOf(url)}:${lineNumber + 1}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    byOwner.set(ownerOf(url), (byOwner.get(ownerOf(url)) ?? 0) + us);
  }
  const top = (m: Map<string, number>, title: string) => {
    console.log(`\n${title} (self time, total ${(total / 1000).toFixed(0)} ms = ${(total / 1000 / REQUESTS).toFixed(1)} ms/request)`);
    for (const [key, us] of [...m].sort((a, b) => b[1] - a[1]).slice(0, 40))
      console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000 / REQUESTS).toFixed(2).padStart(6)} ms/req  ${key}`);
  };
  top(byOwner, "by package / file");
  top(byFunction, "by function");
}

async function main(): Promise<void> {
  if (!consoleBuilt()) throw new Error("build the console first: turbo run build --filter=@copyback/web");
  const database = await createBenchDatabase("board_profile");
  // The driven requests' stretch of the profile (the start-up before it is left out).
  const window = { from: 0, to: 0 };
  try {
    const { companyId, issueId } = await seedIssues(database.url, ISSUES);
    // The render cache off: this profiles rendering, which the cache would mostly skip
    // (BENCH_PROFILE_RENDER_CACHE=on profiles the cached server instead).
    const server = await startConsole(database.url, { COPYBACK_WEB_WORKERS: "1", COPYBACK_WEB_RENDER_CACHE: process.env.BENCH_PROFILE_RENDER_CACHE ?? "off" }, ["--cpu-prof", `--cpu-prof-dir=${dir}`]);
    try {
      const get = async (url: string) => {
        const response = await fetch(url, { redirect: "manual", headers: { cookie: server.cookie } });
        const body = await response.text();
        if (response.status !== 200) throw new Error(`${url}: HTTP ${response.status}`);
        return body;
      };
      const board = `${server.base}/companies/${companyId}/issues`;
      let deep = board;
      for (let hop = 0; hop < 20; hop++) {
        const anchor = /<a[^>]*data-testid="next-page"[^>]*>/.exec(await get(deep))?.[0];
        deep = `${server.base}${/href="([^"]+)"/.exec(anchor ?? "")![1]!.replaceAll("&amp;", "&")}`;
      }
      const pages = [board, `${board}?status=todo`, `${board}?status=in_progress&assignee=unassigned`, deep, `${board}/${issueId}`];
      for (const page of pages) await get(page); // warm-up, not counted apart: the profile covers everything
      const cpuBefore = server.cpuMs();
      window.from = monotonicUs();
      for (let i = 0; i < REQUESTS; i++) await get(pages[i % pages.length]!);
      window.to = monotonicUs();
      console.log(`${REQUESTS} requests: server CPU ${((server.cpuMs() - cpuBefore) / REQUESTS).toFixed(1)} ms/request (load ${os.loadavg()[0]!.toFixed(1)})`);
    } finally {
      await server.stop();
      await new Promise((r) => setTimeout(r, 3000)); // the profile is written on exit
    }
  } finally {
    await database.drop();
  }
  const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}`);
  // The biggest profile is the server's (serve.mjs with one worker is `next start` itself).
  const largest = files.map((f) => path.join(dir, f)).sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0]!;
  console.log(`profile: ${largest}`);
  summarize(JSON.parse(readFileSync(largest, "utf8")) as Profile, window.from, window.to);
}

await main();
