// Benchmark: server response time of the issues board and an issue page with 10,000 issues in a
// company. Prints figures; asserts nothing (a benchmark, not a test).
//
//   npm run bench:issue-page            (build the console first: turbo run build --filter=@copyback/web)
//
// It creates a fresh database on COPYBACK_TEST_DATABASE_URL (or the local PostgreSQL at
// postgresql://postgres@127.0.0.1:5432/postgres), migrates it, inserts one company with 10,000
// issues, starts the built console (`next start`, local mode) on a free port, and times complete
// GET responses (headers and HTML body) of each page, sequentially. The database is dropped at
// the end unless BENCH_KEEP_DATABASE=1.
//
// Knobs: BENCH_ISSUES (10000), BENCH_REQUESTS (50), BENCH_WARMUP (5).
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { applyMigrations, createPrismaClient } from "@copyback/db";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const webDir = path.join(root, "apps/web");
const adminUrl =
  process.env.COPYBACK_TEST_DATABASE_URL?.trim() || "postgresql://postgres@127.0.0.1:5432/postgres";
const ISSUES = Number(process.env.BENCH_ISSUES ?? 10_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 50);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 5);
const STATUSES = [
  "backlog",
  "todo",
  "in_progress",
  "in_review",
  "blocked",
  "done",
  "cancelled",
] as const;

const say = (line: string) => process.stdout.write(`${line}\n`);

function databaseUrl(name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

async function seed(url: string) {
  const prisma = createPrismaClient({
    databaseUrl: url,
    poolSize: 4,
    applicationName: "copyback-bench",
  });
  try {
    const company = await prisma.company.create({
      data: { name: "Bench Robotics", issuePrefix: "BENCH", issueCounter: ISSUES },
    });
    const agents = await Promise.all(
      ["Builder", "Reviewer", "Tester"].map((name) =>
        prisma.agent.create({ data: { companyId: company.id, name, command: ["/bin/true"] } }),
      ),
    );
    const user = await prisma.user.create({
      data: { name: "Bench Owner", email: `bench-${Date.now()}@bench.test` },
    });
    await prisma.companyMembership.create({
      data: { companyId: company.id, userId: user.id, role: "owner" },
    });
    const now = Date.now();
    for (let start = 0; start < ISSUES; start += 1000) {
      const rows = [];
      for (let i = start; i < Math.min(start + 1000, ISSUES); i++) {
        const n = i + 1;
        rows.push({
          companyId: company.id,
          number: n,
          identifier: `BENCH-${n}`,
          title: `Benchmark task ${n}: make the motor controller ${["faster", "safer", "quieter", "cheaper"][n % 4]}`,
          description: "A generated task for the issue page benchmark.",
          status: STATUSES[n % STATUSES.length]!,
          assigneeAgentId: n % 4 === 0 ? null : agents[n % agents.length]!.id,
          createdByUserId: user.id,
          // Spread over ~70 days, a few sharing a timestamp (ties exercise the keyset order).
          lastActivityAt: new Date(now - Math.floor(n / 2) * 600_000),
          createdAt: new Date(now - n * 600_000 - 3_600_000),
        });
      }
      await prisma.issue.createMany({ data: rows });
    }
    // The issue page under test: the newest issue, with a conversation and a few runs.
    const issue = await prisma.issue.findFirstOrThrow({
      where: { companyId: company.id },
      orderBy: [{ lastActivityAt: "desc" }, { id: "desc" }],
    });
    await prisma.issueMessage.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({
        companyId: company.id,
        issueId: issue.id,
        authorType: i % 2 === 0 ? ("user" as const) : ("agent" as const),
        authorUserId: i % 2 === 0 ? user.id : null,
        authorAgentId: i % 2 === 0 ? null : agents[0]!.id,
        body: `Message ${i + 1} of the conversation about ${issue.identifier}.`,
        createdAt: new Date(now - (30 - i) * 60_000),
      })),
    });
    for (let i = 0; i < 5; i++) {
      await prisma.heartbeatRun.create({
        data: {
          companyId: company.id,
          agentId: agents[0]!.id,
          nativeIssueId: issue.id,
          status: "succeeded",
          startedAt: new Date(now - (i + 1) * 3_600_000),
          finishedAt: new Date(now - (i + 1) * 3_500_000),
        },
      });
    }
    await prisma.$executeRawUnsafe("ANALYZE");
    return { companyId: company.id, issueId: issue.id };
  } finally {
    await prisma.$disconnect();
  }
}

async function waitForHealth(url: string, isAlive: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (!isAlive()) throw new Error("the console exited before it answered");
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`no answer from ${url} within 60 s`);
}

async function timeGet(url: string): Promise<{ ms: number; status: number; body: string }> {
  const started = performance.now();
  const response = await fetch(url, { redirect: "manual" });
  const body = await response.text();
  return { ms: performance.now() - started, status: response.status, body };
}

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

async function measure(
  label: string,
  url: string,
  check: (body: string) => boolean,
): Promise<void> {
  for (let i = 0; i < WARMUP; i++) await timeGet(url);
  const times: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const { ms, status, body } = await timeGet(url);
    if (status !== 200 || !check(body))
      throw new Error(`${label}: unexpected answer (HTTP ${status})`);
    times.push(ms);
  }
  times.sort((a, b) => a - b);
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const f = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;
  say(
    `${label.padEnd(34)} p50 ${f(percentile(times, 50))}  p95 ${f(percentile(times, 95))}  mean ${f(mean)}  min ${f(times[0]!)}  max ${f(times.at(-1)!)}`,
  );
}

/** The "Next page" link of a board page (keyset cursor), HTML-unescaped. */
function nextPageHref(html: string): string | null {
  const anchor = /<a[^>]*data-testid="next-page"[^>]*>/.exec(html)?.[0];
  const href = anchor && /href="([^"]+)"/.exec(anchor)?.[1];
  return href ? href.replaceAll("&amp;", "&") : null;
}

async function main(): Promise<void> {
  if (!existsSync(path.join(webDir, ".next", "BUILD_ID"))) {
    say(
      "The console is not built: run `node_modules/.bin/turbo run build --filter=@copyback/web` first.",
    );
    process.exitCode = 1;
    return;
  }
  const name = `copyback_bench_${Date.now().toString(36)}`;
  const url = databaseUrl(name);
  await admin((c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  let server: ReturnType<typeof spawn> | undefined;
  try {
    say(`database ${name} on ${new URL(adminUrl).host}: migrating`);
    await applyMigrations(url);
    const seedStarted = performance.now();
    const { companyId, issueId } = await seed(url);
    say(`inserted ${ISSUES} issues in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);

    const port = await freePort();
    server = spawn(
      path.join(webDir, "node_modules/.bin/next"),
      ["start", "-H", "127.0.0.1", "-p", String(port)],
      {
        cwd: webDir,
        env: {
          ...process.env,
          DATABASE_URL: url,
          COPYBACK_DEPLOYMENT_MODE: "local",
          NODE_ENV: "production",
          NEXT_TELEMETRY_DISABLED: "1",
        },
        stdio: ["ignore", "ignore", "inherit"],
        detached: true,
      },
    );
    let alive = true;
    server.once("exit", () => (alive = false));
    const base = `http://127.0.0.1:${port}`;
    await waitForHealth(`${base}/api/health`, () => alive);

    const board = `${base}/companies/${companyId}/issues`;
    // Twenty "Next page" hops from the first page: the 21st page's URL.
    let deep = board;
    for (let hop = 0; hop < 20; hop++) {
      const next = nextPageHref((await timeGet(deep)).body);
      if (!next) throw new Error("the board has no next page");
      deep = `${base}${next}`;
    }

    say(
      `\nnext start (production build), local mode, ${REQUESTS} sequential requests each after ${WARMUP} warm-up requests:`,
    );
    const rows = (body: string) => body.includes('data-testid="issue-row"');
    await measure("issues board (first page)", board, rows);
    await measure("issues board ?status=todo", `${board}?status=todo`, rows);
    await measure(
      "issues board, filter + assignee",
      `${board}?status=in_progress&assignee=unassigned`,
      rows,
    );
    await measure("issues board, page 21 (keyset)", deep, rows);
    await measure("issue page (30 messages, 5 runs)", `${board}/${issueId}`, (body) =>
      body.includes('data-testid="conversation"'),
    );
  } finally {
    if (server?.pid) {
      try {
        process.kill(-server.pid, "SIGTERM");
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    if (process.env.BENCH_KEEP_DATABASE === "1") say(`kept database ${name}`);
    else
      await admin((c) =>
        c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`),
      );
  }
}

await main();
