// Stop (R-RC-7) from the console: a board member with issues:write wakes a demo agent that works
// for minutes (it writes a partial file first), presses Stop on the task's Agent panel while it
// works, and sees the run cancelled, live, without reloading. The launcher's worker noticed the
// request, stopped the agent's process group, pinned the sandbox (stop-only intent) in the
// transaction that cancelled the run (with the board's file-recovery obligation for the agent's
// unpublished edits) and then released it with the provider's stop receipt; the task keeps its
// status, and Retry waits for the recovery.
// Needs E2E_AUTH_DATABASE_URL (the database the authenticated launcher runs on) to stage the agent.
import { expect, test } from "@playwright/test";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { ACME, databaseUrl, signedInPage, until } from "./authenticated";

test.describe("Stop on the task", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage a long-working demo agent");

  test("R-RC-7 a board member stops a working demo agent and sees the run cancelled, its sandbox kept for file recovery and the task's status unchanged", async ({ browser }) => {
    test.setTimeout(150_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      // --- a demo agent that writes a partial file and then works for five minutes ---
      const { rows } = await sql.query<{ environment_id: string; workspace_id: string }>(
        `SELECT a.environment_id, w.id AS workspace_id FROM agents a, execution_workspaces w
         WHERE a.company_id = $1 AND a.name = 'Builder' AND w.company_id = $1 LIMIT 1`,
        [ACME],
      );
      const place = rows[0];
      if (!place) throw new Error("the demo company has no Builder or workspace: was the seed applied?");
      const marker = `stop-${Date.now()}`;
      const agentId = randomUUID();
      await sql.query(
        `INSERT INTO agents (id, company_id, name, command, adapter_config, environment_id) VALUES ($1, $2, $3, $4, '{"timeoutSeconds": 600}', $5)`,
        [agentId, ACME, `Slow builder ${marker}`, ["/bin/sh", "-c", `echo "working on ${marker}" && mkdir -p e2e && printf 'partial' > e2e/${marker}.txt && sleep 300`], place.environment_id],
      );
      const { rows: issues } = await sql.query<{ id: string }>(
        `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
         INSERT INTO issues (id, company_id, number, identifier, title, status, assignee_agent_id, execution_workspace_id)
         SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'todo', $4, $5 FROM n RETURNING id`,
        [ACME, randomUUID(), `Stop the slow build ${marker}`, agentId, place.workspace_id],
      );
      const issueId = issues[0]!.id;

      // --- a member (issues:write) wakes it and watches it work ---
      const member = await signedInPage(browser, "margaret@acme.test");
      await member.goto(`/companies/${ACME}/issues/${issueId}`);
      await expect(member.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
      await member.evaluate(() => {
        (window as unknown as { liveMarker: string }).liveMarker = "same document";
      });
      const panel = member.getByTestId("agent-panel");
      await panel.getByRole("button", { name: "Wake agent" }).click();
      const chip = panel.getByTestId("agent-run-chip");
      await expect(chip).toHaveText("Working", { timeout: 60_000 });
      // The agent has started and written its partial file before anyone presses Stop.
      const run = await until(
        "the agent to start",
        async () => (await sql.query<{ id: string }>(`SELECT id FROM heartbeat_runs WHERE native_issue_id = $1 AND status = 'running' AND runner_profile_json ? 'agentProcess'`, [issueId])).rows[0],
        60_000,
      );
      await until("the agent's output", async () => (await sql.query(`SELECT 1 FROM run_events WHERE run_id = $1 AND code = 'agent.output'`, [run.id])).rowCount, 30_000);

      // --- Stop ---
      const stop = panel.getByTestId("agent-stop");
      await expect(stop).toBeEnabled();
      await stop.click();
      await expect(panel.getByTestId("run-control-notice")).toContainText("Stopping");
      await expect(chip).toHaveText("Cancelled", { timeout: 30_000 });
      await expect(panel).toContainText("run_stopped");
      await expect(panel.getByTestId("agent-stop")).toHaveCount(0);
      expect(await member.evaluate(() => (window as unknown as { liveMarker?: string }).liveMarker)).toBe("same document");
      // The kept sandbox is a file hold: the compact notice, and Retry says why it waits.
      await expect(member.getByTestId("recovery-notice")).toHaveAttribute("data-kind", "attention", { timeout: 15_000 });
      await expect(panel.getByTestId("agent-retry")).toBeDisabled();
      await expect(panel.getByTestId("retry-reason")).toContainText("waits for recovery");
      // Run-only: the task is still in progress.
      await expect(member.getByTestId("issue-header").getByTestId("issue-status")).toHaveText("In progress");

      // --- what the worker recorded: acknowledgement, pin before release, a stopped sandbox ---
      const { rows: runs } = await sql.query<{ status: string; error_code: string; profile: { stopAcknowledgement?: { requestId: string }; stopRetention?: { outcome: string; leaseId: string; stopIntentRequestId: string } } }>(
        `SELECT status, error_code, runner_profile_json AS profile FROM heartbeat_runs WHERE id = $1`,
        [run.id],
      );
      expect(runs[0]).toMatchObject({ status: "cancelled", error_code: "run_stopped" });
      expect(runs[0]!.profile.stopAcknowledgement?.requestId).toEqual(expect.any(String));
      const retention = runs[0]!.profile.stopRetention;
      expect(retention).toMatchObject({ outcome: "pinned" });
      const { rows: leases } = await sql.query<{ status: string; metadata: { sandboxStopAndRetainReceipt?: { requestId: string } } }>(`SELECT status, metadata FROM environment_leases WHERE id = $1`, [retention!.leaseId]);
      expect(leases[0]).toMatchObject({ status: "released" });
      expect(leases[0]!.metadata.sandboxStopAndRetainReceipt?.requestId).toBe(retention!.stopIntentRequestId);
      const { rows: holds } = await sql.query<{ cause: string }>(`SELECT cause FROM issue_recovery_actions WHERE run_id = $1 AND status = 'active'`, [run.id]);
      expect(holds).toEqual([{ cause: "native_workspace_file_recovery_required" }]);

      // The run page says so too.
      await panel.getByTestId("agent-run-link").click();
      await expect(member.getByTestId("run-status")).toHaveText("Cancelled");
    } finally {
      await sql.end();
    }
  });
});
