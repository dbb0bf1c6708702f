// The worker as a real child process against a real database: liveness, then graceful and forced stops.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";

const here = path.dirname(fileURLToPath(import.meta.url));
const workerDir = path.resolve(here, "..");
const database = useTestDatabase();
const children: ChildProcess[] = [];
let instanceRoot = "";

beforeAll(async () => {
  instanceRoot = await mkdtemp(path.join(os.tmpdir(), "copyback-worker-process-"));
});
afterAll(async () => {
  await rm(instanceRoot, { recursive: true, force: true });
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function startWorker() {
  const port = await freePort();
  // One process (no tsx CLI wrapper in between), so signals reach the worker itself.
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: workerDir,
    env: { ...process.env, DATABASE_URL: database.url(), COPYBACK_HOME: instanceRoot, WORKER_HEALTH_PORT: String(port), WORKER_POLL_INTERVAL_MS: "50", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (d) => (output += d));
  child.stderr?.on("data", (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}/healthz`;
  const deadline = Date.now() + 30_000;
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
  return { child, url, exited, output: () => output };
}

describe("worker process", () => {
  it("serves liveness with loop progress and logs JSON lines", async () => {
    const worker = await startWorker();
    type Report = { status: string; loop: { passes: number; state: string } };
    let body: Report = { status: "none", loop: { passes: 0, state: "none" } };
    // Passes run every 50 ms once the first database round trip is done.
    for (let i = 0; i < 100 && body.loop.passes < 2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      body = (await (await fetch(worker.url)).json()) as Report;
    }
    expect(body.status).toBe("ok");
    expect(body.loop.state).toBe("running");
    expect(body.loop.passes).toBeGreaterThan(1);
    const firstLine = worker.output().split("\n").find((l) => l.trim().startsWith("{"));
    expect(JSON.parse(firstLine ?? "null")).toMatchObject({ service: "copyback-worker", msg: "worker started" });
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.output()).toContain("worker stopped");
  });

  it("a second signal forces the stop", async () => {
    const worker = await startWorker();
    worker.child.kill("SIGTERM");
    worker.child.kill("SIGINT");
    const result = await worker.exited;
    expect(result.code).toBe(130);
    expect(worker.output()).toContain("forced stop");
  });

  it("refuses to start with an invalid configuration and says which variable is wrong", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: workerDir,
      env: { ...process.env, DATABASE_URL: "not-a-url" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain("DATABASE_URL");
  });
});
