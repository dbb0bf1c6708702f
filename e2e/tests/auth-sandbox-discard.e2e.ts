// Retained sandboxes and Discard as board members use them: a member stops a
// working demo agent (its sandbox is kept with the file-recovery obligation); a runtime manager
// finds the sandbox on the Sandboxes page with the reason it is kept, cannot discard it without
// typing its allocation id and acknowledging the open action, discards it, and sees it leave the
// list. The task's notice then says the work is gone (not kept), and the manager closes the
// recovery from Recovery details with the cancelled disposition: the notice goes away and the
// member can wake the agent again. The destroyed lease carries the confirmed destruction receipt.
// Needs E2E_AUTH_DATABASE_URL (the database the authenticated launcher runs on) to stage the agent.
import { expect, test } from "@playwright/test";
import pg from "pg";
import { ACME, databaseUrl, signedInPage, stageSlowAgentTask, until } from "./authenticated";

test.describe("Discard a retained sandbox", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage a long-working demo agent");

  test("a runtime manager discards a stopped run's kept sandbox after acknowledging its recovery, then closes the recovery so the agent can work again", async ({ browser }) => {
    test.setTimeout(180_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      const marker = `discard-${Date.now()}`;
      const { issueId } = await stageSlowAgentTask(sql, marker, `Discard the slow build ${marker}`);

      // --- a member wakes the agent and stops it: the sandbox is kept for file recovery ---
      const member = await signedInPage(browser, "margaret@acme.test");
      await member.goto(`/companies/${ACME}/issues/${issueId}`);
      const panel = member.getByTestId("agent-panel");
      await panel.getByRole("button", { name: "Wake agent" }).click();
      await expect(panel.getByTestId("agent-run-chip")).toHaveText("Working", { timeout: 60_000 });
      const run = await until(
        "the agent to start",
        async () => (await sql.query<{ id: string }>(`SELECT id FROM heartbeat_runs WHERE native_issue_id = $1 AND status = 'running' AND runner_profile_json ? 'agentProcess'`, [issueId])).rows[0],
        60_000,
      );
      await until("the agent's output", async () => (await sql.query(`SELECT 1 FROM run_events WHERE run_id = $1 AND code = 'agent.output'`, [run.id])).rowCount, 30_000);
      await panel.getByTestId("agent-stop").click();
      await expect(panel.getByTestId("agent-run-chip")).toHaveText("Cancelled", { timeout: 30_000 });
      await expect(member.getByTestId("recovery-notice")).toHaveAttribute("data-kind", "attention", { timeout: 15_000 });
      await expect(member.getByTestId("recovery-notice-message")).toContainText("kept in its sandbox");
      const lease = await until(
        "the stopped sandbox to be released with its receipt",
        async () => (await sql.query<{ id: string; provider_lease_id: string }>(`SELECT id, provider_lease_id FROM environment_leases WHERE run_id = $1 AND status = 'released' AND metadata ? 'sandboxStopAndRetainReceipt'`, [run.id])).rows[0],
        30_000,
      );

      // --- a runtime manager finds it on the Sandboxes page, with why it is kept ---
      const manager = await signedInPage(browser, "linus@acme.test");
      await manager.goto(`/companies/${ACME}/sandboxes`);
      const row = manager.getByTestId("sandbox-row").filter({ hasText: lease.provider_lease_id });
      await expect(row).toHaveCount(1);
      await expect(row.getByTestId("sandbox-reasons")).toContainText("native_workspace_file_recovery_required");
      await row.getByTestId("sandbox-discard-open").click();
      const submit = row.getByTestId("sandbox-discard-submit");
      await row.getByTestId("sandbox-discard-allocation").fill("not-the-allocation");
      await row.getByTestId("sandbox-discard-reason").fill(`${marker}: the partial file is not needed`);
      await expect(submit).toBeDisabled();
      await row.getByTestId("sandbox-discard-allocation").fill(lease.provider_lease_id);
      // Every open action that still needs the files must be acknowledged.
      await expect(submit).toBeDisabled();
      await row.getByRole("checkbox").check();
      await expect(submit).toBeEnabled();
      await submit.click();
      await expect(manager.getByTestId("sandbox-row").filter({ hasText: lease.provider_lease_id })).toHaveCount(0, { timeout: 30_000 });
      const { rows: leases } = await sql.query<{ status: string; metadata: { sandboxDestructionReceipt?: { schema: string } } }>(`SELECT status, metadata FROM environment_leases WHERE id = $1`, [lease.id]);
      expect(leases[0]?.status).toBe("destroyed");
      expect(leases[0]?.metadata.sandboxDestructionReceipt?.schema).toBe("copyback.sandbox-destruction-receipt.v1");

      // --- the task says the work is gone; the manager closes the recovery ---
      await manager.goto(`/companies/${ACME}/issues/${issueId}`);
      await expect(manager.getByTestId("recovery-notice-message")).toContainText("was discarded");
      await manager.getByTestId("recovery-details").locator("summary").click();
      const form = manager.getByTestId("file-recovery-form");
      await expect(form.getByTestId("file-recovery-given-up")).toContainText("nothing is left to recover");
      await expect(form.getByTestId("file-recovery-note")).toHaveValue(new RegExp(`${marker}: the partial file is not needed`));
      await expect(form.getByTestId("file-recovery-stop-evidence")).toHaveCount(0);
      await form.getByTestId("file-recovery-submit").click();
      await expect(manager.getByTestId("recovery-notice")).toHaveCount(0, { timeout: 15_000 });
      const { rows: actions } = await sql.query<{ status: string; outcome: string }>(`SELECT status, outcome FROM issue_recovery_actions WHERE run_id = $1`, [run.id]);
      expect(actions).toEqual([{ status: "cancelled", outcome: "cancelled" }]);

      // --- the member's task page lets the agent be woken again ---
      await member.reload();
      await expect(member.getByTestId("recovery-notice")).toHaveCount(0);
      await expect(member.getByTestId("agent-panel").getByRole("button", { name: "Wake agent" })).toBeEnabled();
    } finally {
      await sql.end();
    }
  });
});
