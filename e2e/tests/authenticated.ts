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
