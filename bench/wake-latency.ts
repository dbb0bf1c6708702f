// `pnpm bench:wake-latency`: the time from Wake to `agent.started` for a trivial agent (the demo
// Builder: a shell line and a result file), through real worker processes on a throwaway
// database, one wake at a time (each run settles before the next wake, so no run waits for a
// slot). Measured from the run row's creation to its `agent.started` event (both written by
// this machine's clock), so it covers the notification, the claim, the sandbox's acquisition
// and seeding, and the agent's spawn. Figures only; nothing asserted.
//
//   listen, 1 worker    the product's default: LISTEN copyback_events wakes the loop
//   listen, 2 workers   two workers listening; the first to claim (SKIP LOCKED) starts it
//   poll, 1 worker      the reference: WORKER_LISTEN=off, the 2 s poll a worker used before
//
// Target (issue "many hosts", part 2): p99 < 150 ms for the listening worker(s).
// Options: --wakes=N (default 200, per listening configuration), --reference-wakes=N (default 50),
// --keep (the instance root with the workers' logs, and the database).
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createPrismaClient, DEMO_COMPANY_ID, seedDemo, type PrismaClient } from "@copyback/db";
import { SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { createBenchDatabase } from "./lib/bench-database";
import { median, ms, percentile, renderTable } from "./lib/stats";

const workerDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "apps", "worker");
const ISSUE_TITLE = "Document the motor controller API";

const option = (name: string, fallback: number) => {
  const raw = process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return value;
};

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A worker process; its output goes to a file (never held in a pipe). Resolves once it is live. */
async function startWorker(env: Record<string, string>, logFile: string): Promise<ChildProcess> {
  const port = await freePort();
  const log = createWriteStream(logFile);
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: workerDir,
    env: { ...process.env, WORKER_HEALTH_PORT: String(port), LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const live = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (live) return child;
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`worker did not become live; see ${logFile}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stopWorkers(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.kill("SIGTERM");
        }),
    ),
  );
}

/** One wake: its latency to agent.started (ms), after which the run is awaited to its lease release. */
async function wakeOnce(prisma: PrismaClient, issueId: string): Promise<number> {
  const { runId, created } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId, actor: SYSTEM_ACTOR });
  if (!created) throw new Error("a run of the previous wake was still active");
  const deadline = Date.now() + 120_000;
  let latency: number | null = null;
  for (;;) {
    const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { createdAt: true, status: true } });
    if (latency === null) {
      const started = await prisma.runEvent.findFirst({ where: { runId, code: "agent.started" }, select: { createdAt: true } });
      if (started) latency = started.createdAt.getTime() - run.createdAt.getTime();
    }
    const released = await prisma.runEvent.findFirst({ where: { runId, code: { in: ["lease.released", "lease.release_failed"] } }, select: { id: true } });
    if (latency !== null && released && run.status !== "queued" && run.status !== "running") return latency;
    if (run.status === "failed" || run.status === "cancelled") throw new Error(`run ${runId} ${run.status}`);
    if (Date.now() > deadline) throw new Error(`run ${runId} did not settle (status ${run.status})`);
    // Polling here only waits for the run to finish; the latency comes from the rows' own times.
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function measure(label: string, workers: number, env: Record<string, string>, wakes: number, ctx: { url: string; home: string; prisma: PrismaClient; issueId: string }) {
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < workers; i++) children.push(await startWorker({ DATABASE_URL: ctx.url, COPYBACK_HOME: ctx.home, WORKER_CONCURRENCY: "2", ...env }, path.join(ctx.home, `worker-${label.replace(/\W+/g, "-")}-${i}.log`)));
    // Let each worker's first pass run and its loop fall asleep.
    await new Promise((r) => setTimeout(r, 1_000));
    const latencies: number[] = [];
    for (let i = 0; i < wakes; i++) {
      latencies.push(await wakeOnce(ctx.prisma, ctx.issueId));
      // A pause of varying length, so a polling worker is met at every point of its sleep.
      await new Promise((r) => setTimeout(r, 50 + ((i * 37) % 200)));
    }
    return [label, String(wakes), ms(median(latencies)), ms(percentile(latencies, 99)), ms(Math.max(...latencies))];
  } finally {
    await stopWorkers(children);
  }
}

async function main() {
  const wakes = option("wakes", 200);
  const referenceWakes = option("reference-wakes", 50);
  const db = await createBenchDatabase("wake");
  const home = await mkdtemp(path.join(os.tmpdir(), "copyback-bench-wake-"));
  const prisma = createPrismaClient({ databaseUrl: db.url, poolSize: 4, applicationName: "copyback-bench" });
  try {
    await seedDemo(prisma, { instanceRoot: home });
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, title: ISSUE_TITLE }, select: { id: true } });
    const ctx = { url: db.url, home, prisma, issueId: issue.id };
    console.log(`wake -> agent.started, trivial agent, one wake at a time; database ${db.server}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
    const rows = [
      await measure("listen, 1 worker", 1, {}, wakes, ctx),
      await measure("listen, 2 workers", 2, {}, wakes, ctx),
      await measure("poll 2 s, 1 worker (reference)", 1, { WORKER_LISTEN: "off", WORKER_POLL_INTERVAL_MS: "2000" }, referenceWakes, ctx),
    ];
    console.log(renderTable(["configuration", "wakes", "p50", "p99", "max"], rows));
    console.log(`target: p99 < 150 ms with LISTEN. load average at the end ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
  } finally {
    await prisma.$disconnect();
    if (!process.argv.includes("--keep")) await db.drop();
    if (process.argv.includes("--keep")) console.log(`kept ${home} (worker logs) and database ${db.name}`);
    else await rm(home, { recursive: true, force: true });
  }
}

await main();
