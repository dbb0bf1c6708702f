// Issue 21 part 5, from zero without SQL in the product: an administrator creates an environment
// on the Environments page ("New environment"; a configuration holding a key is refused calmly,
// naming the field, never the value, and nothing is created), points an agent that has none at it
// ("An agent's environment"), and a member's wake of that agent's task runs in it to the end. A
// runtime manager sees the environments but neither form. Only the agent without an environment
// is staged in the database (no page creates agents); needs E2E_AUTH_DATABASE_URL for that.
import { randomUUID } from "node:crypto";
import { expect, test, type Browser, type Page } from "@playwright/test";
import pg from "pg";
import { ACME, databaseUrl, signIn, until } from "./authenticated";

/** signedInPage with room for the first render of a freshly started console (the first page this test opens). */
async function signedInPage(browser: Browser, email: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, email);
  await expect(page.getByTestId("company-name")).toBeVisible({ timeout: 30_000 });
  return page;
}

test.describe("Environments page: create an environment and choose an agent's", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage an agent without an environment");

  test("an administrator creates a local environment (a key refused first), points a new agent at it, and a member's wake runs there", async ({ browser }) => {
    // Three users sign in to a console that may be rendering its pages for the first time.
    test.setTimeout(300_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      const marker = `env-${Date.now()}`;
      const secret = `dtn_e2e_pasted_${marker}`;
      // Builder's command and settings, but no environment: its runs cannot start yet.
      const agentId = randomUUID();
      const agentName = `Fresh builder ${marker}`;
      await sql.query(
        `INSERT INTO agents (id, company_id, name, command, adapter_config, updated_at)
         SELECT $1, company_id, $2, command, adapter_config, now() FROM agents WHERE company_id = $3 AND name = 'Builder'`,
        [agentId, agentName, ACME],
      );
      const { rows: issues } = await sql.query<{ id: string }>(
        `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
         INSERT INTO issues (id, company_id, number, identifier, title, status, assignee_agent_id, execution_workspace_id)
         SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'todo', $4, (SELECT id FROM execution_workspaces WHERE company_id = $1 LIMIT 1) FROM n RETURNING id`,
        [ACME, randomUUID(), `Build in a new environment ${marker}`, agentId],
      );
      const issueId = issues[0]!.id;

      // --- a runtime manager reads the page but gets neither form ---
      const manager = await signedInPage(browser, "linus@acme.test");
      await manager.goto(`/companies/${ACME}/environments`);
      await expect(manager.getByTestId("environment-list")).toBeVisible();
      await expect(manager.getByTestId("environment-new-open")).toHaveCount(0);
      await expect(manager.getByTestId("agent-environment-form")).toHaveCount(0);

      // --- an administrator: a key in the configuration is refused, nothing created ---
      const admin = await signedInPage(browser, "grace@acme.test");
      await admin.goto(`/companies/${ACME}/environments`);
      await admin.getByTestId("environment-new-open").click();
      const form = admin.getByTestId("environment-new-form");
      await form.getByTestId("environment-new-provider").selectOption("daytona");
      await expect(form).toContainText("apiKeyEnv");
      const name = `Local ${marker}`;
      await form.getByTestId("environment-new-name").fill(name);
      await form.getByTestId("environment-new-config").fill(JSON.stringify({ apiKey: secret }));
      await form.getByTestId("environment-new-submit").click();
      const error = form.getByTestId("environment-new-error");
      await expect(error).toContainText("Nothing was created.");
      await expect(error).toContainText("apiKey");
      // The refusal names the field, never the value (the box itself still holds what was typed).
      await expect(error).not.toContainText(secret);
      await expect(admin.getByTestId("environment-list")).not.toContainText(secret);
      expect((await sql.query(`SELECT 1 FROM environments WHERE company_id = $1 AND name = $2`, [ACME, name])).rowCount).toBe(0);

      // --- then a local one with the provider's own settings ---
      await form.getByTestId("environment-new-provider").selectOption("local");
      await form.getByTestId("environment-new-config").fill('{"allowNetwork": false}');
      await form.getByTestId("environment-new-submit").click();
      await expect(admin.getByTestId("environment-new-created")).toContainText(`Created ${name} (local).`);
      const row = admin.getByTestId("environment-row").filter({ hasText: name });
      await expect(row).toHaveCount(1);
      await expect(row.getByTestId("environment-agents")).toHaveText("No agent runs here.");
      const environment = await until(
        "the environment row",
        async () => (await sql.query<{ id: string; plugin_id: string }>(`SELECT id, plugin_id FROM environments WHERE company_id = $1 AND name = $2`, [ACME, name])).rows[0],
        10_000,
      );
      expect(environment.plugin_id).toBe("builtin.local");

      // --- point the new agent at it ---
      const chooser = admin.getByTestId("agent-environment-form");
      await chooser.getByTestId("agent-environment-agent").selectOption({ label: `${agentName} (now: none)` });
      await expect(chooser).toContainText("its runs cannot start until it has one");
      await chooser.getByTestId("agent-environment-environment").selectOption({ label: `${name} (local)` });
      await chooser.getByTestId("agent-environment-submit").click();
      await expect(chooser.getByTestId("agent-environment-done")).toHaveText(`${agentName} now runs in ${name}.`);
      await expect(row.getByTestId("environment-agents")).toHaveText(`Agents that run here: ${agentName}.`);

      // --- a member wakes the task: the run leases from the new environment and finishes ---
      const member = await signedInPage(browser, "margaret@acme.test");
      await member.goto(`/companies/${ACME}/issues/${issueId}`);
      const panel = member.getByTestId("agent-panel");
      await panel.getByRole("button", { name: "Wake agent" }).click();
      await expect(panel.getByTestId("agent-run-chip")).toHaveText("Finished", { timeout: 120_000 });
      const lease = await sql.query<{ environment_id: string }>(
        `SELECT l.environment_id FROM environment_leases l JOIN heartbeat_runs r ON r.id = l.run_id WHERE r.native_issue_id = $1`,
        [issueId],
      );
      expect(lease.rows.map((l) => l.environment_id)).toEqual([environment.id]);
    } finally {
      await sql.end();
    }
  });
});
