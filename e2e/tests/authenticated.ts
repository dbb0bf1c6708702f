// What the authenticated-mode E2E tests share: the demo company, its users' password, the database
// the authenticated launcher runs on (for staging states a browser cannot produce), a signed-in
// page per demo user, and polling for a condition the product reaches on its own.
import { expect, type Browser, type Page } from "@playwright/test";
import { randomUUID } from "node:crypto";
import type pg from "pg";

export const DEMO_PASSWORD = "copyback-demo";
export const ACME = "0a0e0000-0000-4000-8000-00000000ac01";
/** E2E_AUTH_DATABASE_URL: the tests that stage database state skip (with this reason) without it. */
export const databaseUrl = process.env.E2E_AUTH_DATABASE_URL;

/** Submits the sign-in form (the caller checks what happened). */
export async function signIn(page: Page, email: string, password = DEMO_PASSWORD): Promise<void> {
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** A fresh browser context signed in as a demo user (every demo user has DEMO_PASSWORD). */
export async function signedInPage(browser: Browser, email: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, email);
  await expect(page.getByTestId("company-name")).toBeVisible();
  return page;
}

/** Polls `probe` every 100 ms until it returns a truthy value, or fails naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A todo task assigned to a new demo agent on Builder's environment that writes
 * `e2e/<marker>.txt` ("partial") and then works for five minutes: for Stop and what follows it.
 */
export async function stageSlowAgentTask(sql: pg.Client, marker: string, title: string): Promise<{ issueId: string; agentId: string }> {
  const { rows } = await sql.query<{ environment_id: string; workspace_id: string }>(
    `SELECT a.environment_id, w.id AS workspace_id FROM agents a, execution_workspaces w
     WHERE a.company_id = $1 AND a.name = 'Builder' AND w.company_id = $1 LIMIT 1`,
    [ACME],
  );
  const place = rows[0];
  if (!place) throw new Error("the demo company has no Builder or workspace: was the seed applied?");
  const agentId = randomUUID();
  await sql.query(
    `INSERT INTO agents (id, company_id, name, command, adapter_config, environment_id) VALUES ($1, $2, $3, $4, '{"timeoutSeconds": 600}', $5)`,
    [agentId, ACME, `Slow builder ${marker}`, ["/bin/sh", "-c", `echo "working on ${marker}" && mkdir -p e2e && printf 'partial' > e2e/${marker}.txt && sleep 300`], place.environment_id],
  );
  const { rows: issues } = await sql.query<{ id: string }>(
    `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
     INSERT INTO issues (id, company_id, number, identifier, title, status, assignee_agent_id, execution_workspace_id)
     SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'todo', $4, $5 FROM n RETURNING id`,
    [ACME, randomUUID(), title, agentId, place.workspace_id],
  );
  return { issueId: issues[0]!.id, agentId };
}

export interface FailingExportRun {
  environmentId: string;
  agentId: string;
  issueId: string;
  runId: string;
  /** The host workspace the copyback writes into. */
  hostPath: string;
}

/**
 * A real run whose exports fail (README "Rehearsing recovery"): a local environment with the
 * rehearsal fault `faults.failExports`, an agent on it that writes `e2e/<marker>.txt` and submits an
 * in_review result, a todo task assigned to it and its queued native run, which the launcher's
 * worker picks up. With `untilExportHoldRetained` it ends in the exhausted-export hold.
 */
export async function stageFailingExportRun(sql: pg.Client, marker: string, names: { agent: string; task: string }): Promise<FailingExportRun> {
  const { rows } = await sql.query<{ workspace_id: string; host_path: string; config: Record<string, unknown> }>(
    `SELECT w.id AS workspace_id, w.host_path, e.config FROM agents a JOIN environments e ON e.id = a.environment_id, execution_workspaces w
     WHERE a.company_id = $1 AND a.name = 'Builder' AND e.provider = 'local' AND w.company_id = $1 LIMIT 1`,
    [ACME],
  );
  const base = rows[0];
  if (!base) throw new Error("the demo company has no local Builder or workspace: was the seed applied?");
  const environmentId = randomUUID();
  await sql.query(
    `INSERT INTO environments (id, company_id, name, provider, plugin_id, config, default_lease_policy, updated_at)
     VALUES ($1, $2, $3, 'local', 'builtin.local', $4, 'reuse_by_environment', now())`,
    [environmentId, ACME, `Rehearsal ${marker}`, JSON.stringify({ ...base.config, faults: { failExports: 9 } })],
  );
  const agentId = randomUUID();
  const result = JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: `${names.task}: done.` });
  await sql.query(
    `INSERT INTO agents (id, company_id, name, command, adapter_config, environment_id) VALUES ($1, $2, $3, $4, '{"timeoutSeconds": 120}', $5)`,
    [agentId, ACME, names.agent, ["/bin/sh", "-c", `mkdir -p e2e && printf '${marker}' > e2e/${marker}.txt && printf '%s' '${result}' > "$COPYBACK_RESULT_FILE"`], environmentId],
  );
  const { rows: issues } = await sql.query<{ id: string }>(
    `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
     INSERT INTO issues (id, company_id, number, identifier, title, status, assignee_agent_id, execution_workspace_id)
     SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'todo', $4, $5 FROM n RETURNING id`,
    [ACME, randomUUID(), names.task, agentId, base.workspace_id],
  );
  const issueId = issues[0]!.id;
  const runId = randomUUID();
  await sql.query(`INSERT INTO heartbeat_runs (id, company_id, agent_id, native_issue_id, runtime_mode, status) VALUES ($1, $2, $3, $4, 'native', 'queued')`, [runId, ACME, agentId, issueId]);
  return { environmentId, agentId, issueId, runId, hostPath: base.host_path };
}

/**
 * Three failing coordinator attempts of the run (the test only moves the retry times forward),
 * then the exhausted-export hold with its sandbox stopped and retained (R-EX-1): the hold and lease.
 */
export async function untilExportHoldRetained(sql: pg.Client, runId: string): Promise<{ actionId: string; leaseId: string; providerLeaseId: string }> {
  const action = await until(
    "the exhausted-export hold",
    async () => {
      await sql.query(`UPDATE native_run_finalizations SET next_attempt_at = now() WHERE run_id = $1 AND phase = 'retryable_failure' AND next_attempt_at > now()`, [runId]);
      return (await sql.query<{ id: string; lease_id: string }>(`SELECT id, lease_id FROM issue_recovery_actions WHERE run_id = $1 AND cause = 'native_workspace_sync_out_retry_exhausted' AND status = 'active'`, [runId])).rows[0];
    },
    200_000,
  );
  const lease = await until(
    "the sandbox stopped and retained",
    async () =>
      (await sql.query<{ provider_lease_id: string }>(`SELECT provider_lease_id FROM environment_leases WHERE id = $1 AND status = 'released' AND metadata ? 'sandboxStopAndRetainReceipt'`, [action.lease_id])).rows[0],
    60_000,
  );
  return { actionId: action.id, leaseId: action.lease_id, providerLeaseId: lease.provider_lease_id };
}
