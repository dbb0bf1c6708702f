// The worker as a real child process against a real database: liveness, then graceful and forced stops.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { killChildren, startWorkerChild } from "./worker-child";

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

afterEach(() => killChildren(children));

const startWorker = () =>
  startWorkerChild(children, { DATABASE_URL: database.url(), COPYBACK_HOME: instanceRoot, WORKER_POLL_INTERVAL_MS: "50" });

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
    // pino's destination writes asynchronously, so the first line may reach the pipe after the
    // first liveness answer (CI of cf9e10b, load 8): wait for it, with a deadline.
    const jsonLine = () => worker.output().split("\n").find((l) => l.trim().startsWith("{"));
    for (let i = 0; i < 100 && jsonLine() === undefined; i++) await new Promise((r) => setTimeout(r, 100));
    const firstLine = jsonLine();
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
