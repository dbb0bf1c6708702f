// Two hosts behind one console (issue 23 part 3): the launcher's worker is one host (its host id
// generated into the local launcher's COPYBACK_HOME), and this test starts a second worker, as a
// second machine would run it, on an instance root of its own with COPYBACK_HOST_ID=e2e-host-b,
// against the same database. A task on each host's workspace is woken from the console and both
// commit, each on its own host (the file lands in its own workspace; the claim names its host).
// Then host b's worker stops: host b's task, woken again, stays queued and shows why ("Waiting for
// the worker on e2e-host-b"); host b's worker starts again and the task completes.
// Needs E2E_DATABASE_URL (the database the launcher runs on) to register host b's workspace and
// the tasks; the waiting reason needs the worker_hosts liveness record and its console note
// (helper H-WAIT's work on main, issue 23 slice 4).
import { expect, test, type Page } from "@playwright/test";
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";

const ACME = "0a0e0000-0000-4000-8000-00000000ac01";
const HOST_B = "e2e-host-b";
const databaseUrl = process.env.E2E_DATABASE_URL;
const localHome = process.env.E2E_LOCAL_HOME;
const root = path.resolve(import.meta.dirname, "../..");
const LOG = "notes/two-hosts.log";
const RESULT = JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: "Two-host agent appended a line." });
const COMMAND = ["/bin/sh", "-c", `mkdir -p notes && printf 'one line\\n' >> ${LOG} && printf '%s' '${RESULT}' > "$COPYBACK_RESULT_FILE"`];

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Host b's worker: the product's worker process, started the way an operator starts it on a second machine. */
class HostWorker {
  child: ChildProcess | null = null;
  output = "";
  constructor(private readonly home: string) {}

  async start(): Promise<void> {
    const port = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, COPYBACK_HOME: this.home, COPYBACK_HOST_ID: HOST_B, WORKER_HEALTH_PORT: String(port), WORKER_POLL_INTERVAL_MS: "500", RECONCILE_INTERVAL_MS: "1000", LOG_LEVEL: "warn" };
    delete env.NODE_OPTIONS;
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: path.join(root, "apps/worker"), env, stdio: ["ignore", "pipe", "pipe"] });
    // Read as it comes (a full pipe would stall the worker), kept for a failure's message.
    child.stdout!.on("data", (d: Buffer) => (this.output = (this.output + d.toString()).slice(-8_000)));
    child.stderr!.on("data", (d: Buffer) => (this.output = (this.output + d.toString()).slice(-8_000)));
    this.child = child;
    await until(`host b's worker to be ready (output: ${this.output})`, async () => child.exitCode === null && (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 90_000);
  }

  /** SIGTERM (the worker drains, then exits), as an operator stops a host. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.kill("SIGTERM");
    await exited;
    this.child = null;
  }
}

test.describe("two hosts behind one console", () => {
  test.skip(!databaseUrl || !localHome, "E2E_DATABASE_URL (and E2E_LOCAL_HOME) are needed to register the second host's workspace and tasks");

  let sql: pg.Client;
  let hostA: string;
  const place = { a: "", b: "" };
  const tasks = { a: "", b: "" };
  const hostBHome = mkdtempSync(path.join(os.tmpdir(), "copyback-e2e-host-b-"));
  const hostB = new HostWorker(hostBHome);

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    // The launcher's worker generated its host id into its instance root at its first start.
    hostA = await until("the launcher's host id", async () => existsSync(path.join(localHome!, "host-id")) && readFileSync(path.join(localHome!, "host-id"), "utf8").trim(), 60_000);
    const { rows } = await sql.query<{ environment_id: string }>("SELECT environment_id FROM agents WHERE company_id = $1 AND name = 'Builder'", [ACME]);
    if (!rows[0]) throw new Error("the demo company has no Builder: was the seed applied?");
    const agentId = randomUUID();
    await sql.query(`INSERT INTO agents (id, company_id, name, command, adapter_config, environment_id) VALUES ($1, $2, $3, $4, '{"timeoutSeconds": 120}', $5)`, [agentId, ACME, `Two-host agent ${agentId.slice(0, 8)}`, COMMAND, rows[0].environment_id]);
    // One workspace on each host: host a's anywhere on this machine, host b's under its own instance root.
    place.a = mkdtempSync(path.join(os.tmpdir(), "copyback-e2e-host-a-ws-"));
    place.b = path.join(hostBHome, "workspaces", "b");
    for (const [key, dir] of Object.entries(place)) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, "README.md"), `# host ${key}'s workspace\n`);
    }
    for (const key of ["a", "b"] as const) {
      const workspaceId = randomUUID();
      await sql.query("INSERT INTO execution_workspaces (id, company_id, name, host_path, host_id) VALUES ($1, $2, $3, $4, $5)", [workspaceId, ACME, `two-host ${key} ${workspaceId.slice(0, 8)}`, place[key], key === "a" ? hostA : HOST_B]);
      const { rows: issues } = await sql.query<{ id: string }>(
        `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
         INSERT INTO issues (id, company_id, number, identifier, title, status, assignee_agent_id, execution_workspace_id)
         SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'todo', $4, $5 FROM n RETURNING id`,
        [ACME, randomUUID(), `Two hosts: the task on host ${key}`, agentId, workspaceId],
      );
      tasks[key] = issues[0]!.id;
    }
    await hostB.start();
  });

  test.afterAll(async () => {
    await hostB.stop();
    await sql?.end();
    // Host b's instance root (its workspace and sandboxes) and host a's workspace are this test's own.
    for (const dir of [hostBHome, place.a]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function wakeAndWatch(page: Page, issueId: string): Promise<ReturnType<Page["getByTestId"]>> {
    await page.goto(`/companies/${ACME}/issues/${issueId}`);
    await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
    const panel = page.getByTestId("agent-panel");
    await panel.getByRole("button", { name: "Wake agent" }).click();
    await expect(panel.getByText("Agent woken: the run is queued.")).toBeVisible({ timeout: 30_000 });
    return panel;
  }

  /** The hosts the database recorded as claiming the task's runs (activity run.started), oldest first. */
  async function claimHosts(issueId: string): Promise<string[]> {
    const { rows } = await sql.query<{ host: string | null }>(
      `SELECT a.details->>'hostId' AS host FROM activity_log a JOIN heartbeat_runs r ON r.id = a.entity_id
       WHERE a.action = 'run.started' AND r.native_issue_id = $1 ORDER BY a.created_at`,
      [issueId],
    );
    return rows.map((r) => r.host ?? "(none)");
  }

  const lines = (dir: string) => (existsSync(path.join(dir, LOG)) ? readFileSync(path.join(dir, LOG), "utf8").split("\n").filter(Boolean).length : 0);

  test("a task on each host commits on its own host; host b's task waits, visibly, while host b is down, and completes when it returns", async ({ page }) => {
    test.setTimeout(300_000);
    // Both tasks woken, both commit, each in its own host's workspace, each claimed by its own host.
    for (const key of ["a", "b"] as const) {
      const panel = await wakeAndWatch(page, tasks[key]);
      await expect(panel.getByTestId("agent-run-chip")).toHaveText("Finished", { timeout: 90_000 });
      await expect(page.getByTestId("issue-header").getByTestId("issue-status")).toHaveText("In review");
      expect(lines(place[key])).toBe(1);
      expect(await claimHosts(tasks[key])).toEqual([key === "a" ? hostA : HOST_B]);
    }
    // Nothing of either run reached the other host's workspace.
    expect(lines(place.a) + lines(place.b)).toBe(2);

    // Host b stops. Its task, woken again, waits for it and says so; host a's worker does not take it.
    await hostB.stop();
    const panel = await wakeAndWatch(page, tasks.b);
    // (The chip shows the new run once the page has re-read it: a loaded machine takes seconds.)
    await expect(panel.getByTestId("agent-run-chip")).toHaveText("Queued", { timeout: 30_000 });
    const wait = panel.getByTestId("run-host-wait");
    await expect(wait).toContainText(`Waiting for the worker on ${HOST_B}`, { timeout: 60_000 });
    await expect(wait).toHaveAttribute("data-code", "waiting_for_host");
    // Still queued a few seconds on, with host a's worker polling all along.
    await page.waitForTimeout(5_000);
    await expect(panel.getByTestId("agent-run-chip")).toHaveText("Queued");
    expect(lines(place.b)).toBe(1);

    // Host b returns: the same run is claimed by it and completes; the page follows without a reload.
    await hostB.start();
    await expect(panel.getByTestId("agent-run-chip")).toHaveText("Finished", { timeout: 90_000 });
    await expect(wait).toHaveCount(0);
    expect(lines(place.b)).toBe(2);
    expect(await claimHosts(tasks.b)).toEqual([HOST_B, HOST_B]);
    expect(lines(place.a)).toBe(1);
  });
});
