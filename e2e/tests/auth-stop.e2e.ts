// Stop (R-RC-7) from the console: a board member with issues:write wakes a demo agent that works
// for minutes (it writes a partial file first), presses Stop on the task's Agent panel while it
// works, and sees the run cancelled, live, without reloading. The launcher's worker noticed the
// request, stopped the agent's process group, pinned the sandbox (stop-only intent) in the
// transaction that cancelled the run (with the board's file-recovery obligation for the agent's
// unpublished edits) and then released it with the provider's stop receipt; the task keeps its
// status, and Retry waits for the recovery.
// Needs E2E_AUTH_DATABASE_URL (the database the authenticated launcher runs on) to stage the agent.
import { expect, test } from "@playwright/test";
import pg from "pg";
import { ACME, databaseUrl, signedInPage, stageSlowAgentTask, until } from "./authenticated";

test.describe("Stop on the task", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage a long-working demo agent");

  test("R-RC-7 a board member stops a working demo agent and sees the run cancelled, its sandbox kept for file recovery and the task's status unchanged", async ({ browser }) => {
    test.setTimeout(150_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      // --- a demo agent that writes a partial file and then works for five minutes ---
      const marker = `stop-${Date.now()}`;
      const { issueId } = await stageSlowAgentTask(sql, marker, `Stop the slow build ${marker}`);

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
