// The export-only retry as board members see it (issue 10 items 3 and 9; R-EX-1, R-EX-2, R-UI-2).
// A real run of a real agent in a local sandbox whose environment carries the rehearsal fault
// `faults.failExports` (README "Rehearsing recovery"): every export of its first three
// coordinator attempts fails as a transport failure, so the launcher's worker ends the run in the
// exhausted-export hold with its sandbox stopped and retained (the test only moves the retry
// times forward). A member sees the operator-attention notice without identifiers and without any
// form; a runtime manager's Recovery details show the run, lease, provider allocation, stopped
// receipt and the exact export-only retry call; the retry is requested through that REST route,
// and the member's open page loses the notice once the same run committed its files.
// Needs E2E_AUTH_DATABASE_URL (the database the authenticated launcher runs on).
import { expect, test } from "@playwright/test";
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { ACME, databaseUrl, signedInPage, until } from "./authenticated";

test.describe("export-only retry of an exhausted export", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage the rehearsal environment");

  test("a member sees the operator-attention notice without identifiers or form; a runtime manager sees the exact retry call; after the retry commits the notice is gone", async ({ browser, baseURL }) => {
    test.setTimeout(300_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      // --- a local environment with the rehearsal fault, an agent on it, a task and its run ---
      const { rows: envRows } = await sql.query<{ workspace_id: string; host_path: string; config: Record<string, unknown> }>(
        `SELECT w.id AS workspace_id, w.host_path, e.config FROM agents a JOIN environments e ON e.id = a.environment_id, execution_workspaces w
         WHERE a.company_id = $1 AND a.name = 'Builder' AND e.provider = 'local' AND w.company_id = $1 LIMIT 1`,
        [ACME],
      );
      const base = envRows[0];
      if (!base) throw new Error("the demo company has no local Builder or workspace: was the seed applied?");
      const marker = `exported-${Date.now()}`;
      const environmentId = randomUUID();
      await sql.query(
        `INSERT INTO environments (id, company_id, name, provider, plugin_id, config, default_lease_policy, updated_at)
         VALUES ($1, $2, $3, 'local', 'builtin.local', $4, 'reuse_by_environment', now())`,
        [environmentId, ACME, `Rehearsal ${marker}`, JSON.stringify({ ...base.config, faults: { failExports: 9 } })],
      );
      const agentId = randomUUID();
      const result = JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: "Exported work." });
      await sql.query(
        `INSERT INTO agents (id, company_id, name, command, adapter_config, environment_id) VALUES ($1, $2, $3, $4, '{"timeoutSeconds": 120}', $5)`,
        [agentId, ACME, `Exporter ${marker}`, ["/bin/sh", "-c", `mkdir -p e2e && printf '${marker}' > e2e/${marker}.txt && printf '%s' '${result}' > "$COPYBACK_RESULT_FILE"`], environmentId],
      );
      const { rows: issueRows } = await sql.query<{ id: string; identifier: string }>(
        `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
         INSERT INTO issues (id, company_id, number, identifier, title, status, assignee_agent_id, execution_workspace_id)
         SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'todo', $4, $5 FROM n RETURNING id, identifier`,
        [ACME, randomUUID(), `Export the work ${marker}`, agentId, base.workspace_id],
      );
      const issue = issueRows[0]!;
      const runId = randomUUID();
      await sql.query(`INSERT INTO heartbeat_runs (id, company_id, agent_id, native_issue_id, runtime_mode, status) VALUES ($1, $2, $3, $4, 'native', 'queued')`, [runId, ACME, agentId, issue.id]);

      // --- three failing coordinator attempts (the retry times moved forward), then the hold ---
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

      // --- a member: the compact notice, no identifiers, no details, no form ---
      const member = await signedInPage(browser, "margaret@acme.test");
      await member.goto(`/companies/${ACME}/issues/${issue.id}`);
      await expect(member.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
      const notice = member.getByTestId("recovery-notice");
      await expect(notice).toHaveAttribute("data-kind", "attention");
      await expect(notice.getByTestId("recovery-notice-message")).toContainText("kept failing");
      await expect(notice.getByRole("link", { name: "Inspect run" })).toHaveAttribute("href", new RegExp(`/runs/${runId}$`));
      await expect(member.getByTestId("recovery-details")).toHaveCount(0);
      await expect(notice.locator("form, input, textarea, select")).toHaveCount(0);
      const memberText = await member.locator("body").innerText();
      for (const secret of [action.id, action.lease_id, lease.provider_lease_id, "retry-workspace-export", "curl"]) expect(memberText).not.toContain(secret);

      // --- a runtime manager: Recovery details with the run, lease, allocation, receipt and exact call ---
      const manager = await signedInPage(browser, "linus@acme.test");
      await manager.goto(`/companies/${ACME}/issues/${issue.id}`);
      await manager.getByTestId("recovery-details").locator("summary").click();
      const hold = manager.getByTestId("export-hold-details");
      await expect(hold).toHaveAttribute("data-kind", "retry_exhausted");
      await expect(hold.getByTestId("export-hold-run-error")).toHaveText("native_workspace_sync_out_retry_exhausted");
      await expect(hold.getByTestId("export-hold-allocation")).toHaveText(lease.provider_lease_id);
      await expect(hold.getByTestId("export-hold-receipt")).toContainText("environmentStopLease");
      await expect(hold.getByTestId("finalization-attempt")).toHaveCount(3);
      const apiCall = hold.getByTestId("export-retry-api-call");
      await expect(apiCall).toContainText(`/api/issues/${issue.id}/recovery-actions/retry-workspace-export`);
      await expect(apiCall).toContainText(action.id);
      await expect(apiCall).toContainText(runId);
      await expect(apiCall).toContainText("repairNote");
      const cli = hold.getByTestId("export-retry-cli");
      await expect(cli).toContainText("copyback recovery retry-export");
      await expect(cli).toContainText(`--issue ${issue.id} --action ${action.id} --run ${runId}`);

      // --- the retry through the REST route the details name ---
      const retried = await manager.request.post(`/api/issues/${issue.id}/recovery-actions/retry-workspace-export`, {
        headers: { origin: baseURL ?? "" },
        data: { actionId: action.id, runId, repairNote: "E2E: the rehearsal fault is spent; no file in the sandbox was touched." },
      });
      expect(retried.status(), await retried.text()).toBe(200);
      expect(await retried.json()).toMatchObject({ actionId: action.id, runId });

      // --- the member's open page, without a reload: the notice goes once the same run committed ---
      await expect(member.getByTestId("recovery-notice")).toHaveCount(0, { timeout: 90_000 });
      await expect(member.getByTestId("issue-header").getByTestId("issue-status")).toHaveText("In review", { timeout: 15_000 });
      expect(await readFile(path.join(base.host_path, "e2e", `${marker}.txt`), "utf8")).toBe(marker);
      const { rows: settled } = await sql.query<{ status: string; action_status: string; runs: string }>(
        `SELECT r.status::text AS status, a.status::text AS action_status, (SELECT count(*) FROM heartbeat_runs WHERE native_issue_id = $3)::text AS runs
         FROM heartbeat_runs r, issue_recovery_actions a WHERE r.id = $1 AND a.id = $2`,
        [runId, action.id, issue.id],
      );
      // The same run committed; no new run (no agent turn, no wake).
      expect(settled[0]).toEqual({ status: "succeeded", action_status: "resolved", runs: "1" });
    } finally {
      await sql.end().catch(() => undefined);
    }
  });
});
