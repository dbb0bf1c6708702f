// Liveness and readiness with real processes: the launcher's supervised embedded PostgreSQL is killed with
// SIGKILL under a running worker. While it is down the worker stays live (/livez 200) and is not
// ready (/readyz 503, the database unreachable); once the supervisor has restarted the server the
// worker is ready again on its own and its passes succeed again (no restart of the worker).
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { resolveDatabase, type ResolvedDatabase } from "@copyback/db";
import { killChildren, startWorkerChild } from "./worker-child";

const children: ChildProcess[] = [];
const dirs: string[] = [];
let database: ResolvedDatabase | undefined;
afterAll(async () => {
  killChildren(children);
  await database?.stop();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

interface Probe {
  status: number;
  body: { status: string; database?: { reachable: boolean; error?: string }; loop: { passes: number; lastError: string | null } };
}
async function get(url: string): Promise<Probe> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return { status: response.status, body: (await response.json()) as Probe["body"] };
}
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the worker across a killed and restarted embedded PostgreSQL", () => {
  it("live but not ready while the database is down, ready again on its own after the restart", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "copyback-readiness-"));
    dirs.push(root);
    const events: string[] = [];
    database = await resolveDatabase({ instanceRoot: path.join(root, "db"), port: await freePort(), migrate: true, supervise: (line) => events.push(line) });
    const worker = await startWorkerChild(children, {
      DATABASE_URL: database.url,
      COPYBACK_HOME: path.join(root, "home"),
      WORKER_POLL_INTERVAL_MS: "100",
      RECONCILE_INTERVAL_MS: "200",
      LOG_LEVEL: "fatal",
    });
    const base = worker.url.replace(/\/healthz$/, "");
    await until("ready", async () => (await get(`${base}/readyz`)).status === 200);
    expect((await get(`${base}/readyz`)).body).toMatchObject({ status: "ready", database: { reachable: true } });

    const pidFile = path.join(root, "db", "postgres", "data", "postmaster.pid");
    const postmaster = Number(fs.readFileSync(pidFile, "utf8").split("\n")[0]);
    process.kill(postmaster, "SIGKILL");

    let down: Probe | undefined;
    await until("not ready", async () => {
      down = await get(`${base}/readyz`);
      return down.status === 503;
    });
    expect(down?.body).toMatchObject({ status: "not_ready", database: { reachable: false } });
    expect((await get(`${base}/livez`)).status).toBe(200);
    expect((await get(`${base}/healthz`)).status).toBe(200);

    await until("restarted", async () => events.length > 0);
    expect(events[0]).toMatch(new RegExp(`^embedded PostgreSQL \\(PID ${postmaster}\\) died \\(killed by SIGKILL\\); restarted it after`));
    await until("ready again", async () => (await get(`${base}/readyz`)).status === 200);
    // The loop carries on: passes keep finishing, and without errors again.
    const after = (await get(`${base}/livez`)).body.loop.passes;
    await until("a clean pass", async () => {
      const { loop } = (await get(`${base}/livez`)).body;
      return loop.passes > after && loop.lastError === null;
    });
    expect(worker.child.exitCode).toBeNull();
  });
});
