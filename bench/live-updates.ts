// Benchmark: live updates at scale on one web process. BENCH_CONNECTIONS
// open pages subscribe to the server push channel (GET /api/events, server-sent events, signed in
// as the local board), then one change to an issue row is made BENCH_CHANGES times; each time the
// bench records when every connection received it. Prints the delivery latency (target: all of
// 1,000 connections within 2 s, p99), deliveries missed, and the memory each idle connection costs
// the server (resident memory of its process group before and after opening them, and the
// console's own copyback_live_connections gauge as a cross-check). Asserts nothing.
//
//   pnpm bench:live-updates          (build the console first: turbo run build --filter=@copyback/web)
//
// Knobs: BENCH_CONNECTIONS (1000), BENCH_CHANGES (10), BENCH_ISSUES (1000).
import http from "node:http";
import os from "node:os";
import pg from "pg";
import { parseExposition, sampleSum } from "@copyback/core/metrics";
import { createBenchDatabase } from "./lib/bench-database";
import { consoleBuilt, startConsole } from "./lib/console-server";
import { seedIssues } from "./lib/issue-seed";
import { percentile } from "./lib/stats";

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1000);
const CHANGES = Number(process.env.BENCH_CHANGES ?? 10);
const ISSUES = Number(process.env.BENCH_ISSUES ?? 1000);
const TARGET_CONNECTIONS = 1000;
const TARGET_P99_MS = 2000;
const DELIVERY_TIMEOUT_MS = 10_000;

const say = (line: string) => process.stdout.write(`${line}\n`);
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(" / ");
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** One open page's subscription: resolves `ready` on the stream's first event, reports every change's issue id. */
interface Subscription {
  ready: Promise<void>;
  close(): void;
}

function subscribe(base: string, companyId: string, cookie: string, agent: http.Agent, onChange: (issueId: string | null, at: number) => void): Subscription {
  let resolveReady!: () => void;
  let rejectReady!: (error: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  const req = http.get(`${base}/api/events?companyId=${companyId}`, { agent, headers: { cookie, accept: "text/event-stream" } }, (res) => {
    if (res.statusCode !== 200) {
      rejectReady(new Error(`GET /api/events answered ${res.statusCode}`));
      res.resume();
      return;
    }
    res.setEncoding("utf8");
    let buffer = "";
    res.on("data", (chunk: string) => {
      const at = performance.now();
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        if (event === "ready") resolveReady();
        if (event === "change") {
          const data = block
            .split("\n")
            .filter((line) => line.startsWith("data: "))
            .map((line) => line.slice(6))
            .join("\n");
          try {
            onChange((JSON.parse(data) as { issueId?: string | null }).issueId ?? null, at);
          } catch {
            onChange(null, at);
          }
        }
      }
    });
  });
  req.on("error", (error) => rejectReady(error));
  return { ready, close: () => req.destroy() };
}

async function main(): Promise<void> {
  if (!consoleBuilt()) {
    say("The console is not built: run `node_modules/.bin/turbo run build --filter=@copyback/web` first.");
    process.exitCode = 1;
    return;
  }
  const database = await createBenchDatabase("live");
  // The target is per web process: one `next start`, whatever serve.mjs would choose.
  const server = await startConsole(database.url, { COPYBACK_WEB_WORKERS: "1" }).catch(async (error: unknown) => {
    await database.drop();
    throw error;
  });
  const subscriptions: Subscription[] = [];
  const writer = new pg.Client({ connectionString: database.url });
  try {
    const { companyId, issueId } = await seedIssues(database.url, ISSUES);
    await writer.connect();
    say(`database ${database.name} on ${database.server}; ${ISSUES} issues; next start (production build), local mode, one process`);
    say(`load average before: ${load()}`);

    // Warm the route (first compile of the handler, the LISTEN connection) with one subscription.
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const warm = subscribe(server.base, companyId, server.cookie, agent, () => undefined);
    await warm.ready;
    warm.close();
    await new Promise((r) => setTimeout(r, 1000));
    const rssBefore = server.rssBytes();

    // received[c] = when connection c saw the current change (NaN until it does).
    let received = new Float64Array(CONNECTIONS).fill(Number.NaN);
    let current: string | null = null;
    const openStarted = performance.now();
    for (let c = 0; c < CONNECTIONS; c++) {
      subscriptions.push(
        subscribe(server.base, companyId, server.cookie, agent, (changedIssue, at) => {
          if (current !== null && changedIssue === current && Number.isNaN(received[c]!)) received[c] = at;
        }),
      );
      // Opened in small waves so the bench measures idle connections, not a connect storm.
      if (c % 50 === 49) await Promise.all(subscriptions.slice(-50).map((s) => s.ready));
    }
    await Promise.all(subscriptions.map((s) => s.ready));
    const openSeconds = (performance.now() - openStarted) / 1000;
    await new Promise((r) => setTimeout(r, 3000));
    const rssAfter = server.rssBytes();
    const metrics = await fetch(`${server.base}/api/metrics`, { headers: { cookie: server.cookie } });
    const gauge = metrics.ok ? sampleSum(parseExposition(await metrics.text()), "copyback_live_connections") : Number.NaN;
    say(`${CONNECTIONS} connections open in ${openSeconds.toFixed(1)} s (the console's copyback_live_connections: ${gauge})`);
    say(`server resident memory: ${mib(rssBefore)} before, ${mib(rssAfter)} with them open: ${((rssAfter - rssBefore) / CONNECTIONS / 1024).toFixed(1)} KiB per idle connection`);

    const latencies: number[] = [];
    let missed = 0;
    for (let round = 0; round < CHANGES; round++) {
      received = new Float64Array(CONNECTIONS).fill(Number.NaN);
      current = issueId;
      const started = performance.now();
      // One change: the issue row's title (the live trigger notifies its company's subscribers).
      await writer.query("UPDATE issues SET title = $1, updated_at = now() WHERE id = $2", [`Live benchmark change ${round + 1}`, issueId]);
      const deadline = started + DELIVERY_TIMEOUT_MS;
      while (received.some((t) => Number.isNaN(t)) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      let worst = 0;
      for (const at of received) {
        if (Number.isNaN(at)) missed += 1;
        else {
          latencies.push(at - started);
          worst = Math.max(worst, at - started);
        }
      }
      say(`change ${String(round + 1).padStart(2)}: delivered to ${received.filter((t) => !Number.isNaN(t)).length}/${CONNECTIONS}, last after ${worst.toFixed(0)} ms`);
      current = null;
      await new Promise((r) => setTimeout(r, 500));
    }
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    say(`delivery latency over ${latencies.length} deliveries: p50 ${p50.toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms; missed ${missed}`);
    const verdict = p99 <= TARGET_P99_MS && missed === 0 ? "PASS" : "MISS";
    say(
      CONNECTIONS >= TARGET_CONNECTIONS
        ? `target: one change to all ${TARGET_CONNECTIONS} connections within ${TARGET_P99_MS} ms (p99): ${verdict}`
        : `target: one change to all ${TARGET_CONNECTIONS} connections within ${TARGET_P99_MS} ms (p99): not measured (${CONNECTIONS} connections here: ${verdict} only indicative)`,
    );
    say(`load average after: ${load()}`);
  } finally {
    for (const s of subscriptions) s.close();
    await writer.end().catch(() => undefined);
    await server.stop();
    await database.drop();
  }
}

await main();
