// The worker as a real child process for integration tests: one process (no tsx CLI wrapper in
// between, so signals reach the worker itself), its output collected, its exit awaited, and a
// registry of children that a test file kills in afterEach.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll } from "vitest";
import { seedDemo } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";

const workerDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

export interface WorkerChild {
  child: ChildProcess;
  port: number;
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
  /** The exit, or a failure that shows the worker's output when it has not exited within `ms`. */
  exitWithin: (ms: number) => Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `src/main.ts` with the environment given (plus a free health port) and waits until it is
 * live (within `liveWithinMs`, 30 s by default; a loaded shared machine may need more for tsx's start).
 */
export async function startWorkerChild(children: ChildProcess[], env: Record<string, string>, liveWithinMs = 30_000): Promise<WorkerChild> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: workerDir,
    env: { ...process.env, WORKER_HEALTH_PORT: String(port), LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}/healthz`;
  const deadline = Date.now() + liveWithinMs;
  for (;;) {
    try {
      const res = await fetch(url);
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`worker did not become live:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const exitWithin = (ms: number) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`worker ${child.pid} did not exit within ${ms} ms; its output:\n${output}`)), ms);
      void exited.then((result) => {
        clearTimeout(timer);
        resolve(result);
      });
    });
  return { child, port, url, exited, output: () => output, exitWithin };
}

export function killChildren(children: ChildProcess[]): void {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
}

/**
 * One test file's demo instance: a test database with the demo seed, a fresh instance root (named
 * with `prefix`), and the worker children it starts, killed after each test and removed after the
 * file. `startWorker` passes the database and instance root, then `env`.
 */
export function useDemoWorkerInstance(prefix: string) {
  const database = useTestDatabase();
  const children: ChildProcess[] = [];
  let instanceRoot = "";
  beforeAll(async () => {
    instanceRoot = await mkdtemp(path.join(os.tmpdir(), prefix));
    await seedDemo(database.prisma(), { instanceRoot });
  });
  afterEach(() => killChildren(children));
  afterAll(async () => {
    await rm(instanceRoot, { recursive: true, force: true });
  });
  return {
    database,
    instanceRoot: () => instanceRoot,
    startWorker: (env: Record<string, string>, liveWithinMs?: number) => startWorkerChild(children, { DATABASE_URL: database.url(), COPYBACK_HOME: instanceRoot, ...env }, liveWithinMs),
  };
}

/** Polls `read` every 100 ms until `ok`; past `timeoutMs` fails with the last value and the worker's output. */
export async function waitUntil<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, output: () => string, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)}\nworker output:\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
