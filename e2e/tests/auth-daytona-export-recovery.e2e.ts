// The Daytona journey (issue 21): wake -> export fails -> hold -> Retry export -> commit, on a
// Daytona environment whose endpoint is the emulator this test starts (packages/core/test/support/
// daytona, a real HTTP server speaking Daytona's API) and whose key variable the launcher's worker
// has (daytona-emulator.ts). The emulator is configured only by this test: the environment row
// written here points at it; it is never registered as a provider. Once the agent started, every
// upload into the sandbox answers 503, so each delta export fails as a provider failure; after three
// attempts the worker holds the run with the Daytona sandbox stopped (auto-delete disabled). A
// runtime manager sees the hold and its retry call; the retry (the route the details name) resumes
// the same sandbox and the same run commits its exact file; the member's notice goes.
// Needs E2E_AUTH_DATABASE_URL (the database the authenticated launcher runs on).
import { expect, test } from "@playwright/test";
import { randomUUID } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startDaytonaEmulator } from "../../packages/core/test/support/daytona/emulator";
import { DAYTONA_E2E_KEY, DAYTONA_E2E_KEY_VARIABLE } from "../daytona-emulator";
import { ACME, databaseUrl, signedInPage, until, untilExportHoldRetained } from "./authenticated";

test.describe("Retry export on a Daytona sandbox (emulator)", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage the Daytona environment");

  test("R-EX-1 R-EX-2 R-DT-1 wake, the delta export fails, the hold keeps the stopped Daytona sandbox, Retry export commits the same run's exact file", async ({ browser, baseURL }) => {
    test.setTimeout(300_000);
    const root = await mkdtemp(path.join(os.tmpdir(), "copyback-e2e-daytona-"));
    const emulator = await startDaytonaEmulator({ root, apiKey: DAYTONA_E2E_KEY });
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      const marker = `daytona-${Date.now()}`;
      const { rows } = await sql.query<{ workspace_id: string; host_path: string }>(
        `SELECT w.id AS workspace_id, w.host_path FROM execution_workspaces w WHERE w.company_id = $1 ORDER BY w.created_at LIMIT 1`,
        [ACME],
      );
      const base = rows[0];
      if (!base) throw new Error("the demo company has no workspace: was the seed applied?");
      const environmentId = randomUUID();
      await sql.query(
        `INSERT INTO environments (id, company_id, name, provider, plugin_id, config, default_lease_policy, updated_at)
         VALUES ($1, $2, $3, 'daytona', 'builtin.daytona', $4, 'reuse_by_environment', now())`,
        [environmentId, ACME, `Daytona ${marker}`, JSON.stringify({ apiUrl: emulator.apiUrl, apiKeyEnv: DAYTONA_E2E_KEY_VARIABLE })],
      );
      const agentId = randomUUID();
      const result = JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: `Daytona ${marker}: done.` });
      await sql.query(`INSERT INTO agents (id, company_id, name, command, adapter_config, environment_id) VALUES ($1, $2, $3, $4, '{"timeoutSeconds": 120}', $5)`, [
        agentId,
        ACME,
        `Daytona agent ${marker}`,
        ["/bin/sh", "-c", `sleep 2 && mkdir -p e2e && printf '${marker}' > e2e/${marker}.txt && printf '%s' '${result}' > "$COPYBACK_RESULT_FILE"`],
        environmentId,
      ]);
      const { rows: issues } = await sql.query<{ id: string }>(
        `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
         INSERT INTO issues (id, company_id, number, identifier, title, status, assignee_agent_id, execution_workspace_id)
         SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'todo', $4, $5 FROM n RETURNING id`,
        [ACME, randomUUID(), `Daytona work ${marker}`, agentId, base.workspace_id],
      );
      const issueId = issues[0]!.id;
      // The wake: a queued run the launcher's worker claims.
      const runId = randomUUID();
      await sql.query(`INSERT INTO heartbeat_runs (id, company_id, agent_id, native_issue_id, runtime_mode, status) VALUES ($1, $2, $3, $4, 'native', 'queued')`, [runId, ACME, agentId, issueId]);

      // Once the agent runs (the seed is done), every upload into the sandbox fails: the delta export's.
      await until("agent.started", async () => (await sql.query(`SELECT 1 FROM run_events WHERE run_id = $1 AND code = 'agent.started'`, [runId])).rowCount, 120_000);
      for (let i = 0; i < 500; i += 1) emulator.faults.once({ op: "upload", kind: "status", status: 503 });
      const exhausted = await untilExportHoldRetained(sql, runId);
      emulator.faults.clear();
      const sandboxId = /^daytona:([^?]+)/.exec(exhausted.providerLeaseId)?.[1] ?? "";
      const record = emulator.sandbox(sandboxId);
      expect([record.state, record.autoDeleteInterval]).toEqual(["stopped", -1]);
      expect(await readFile(path.join(root, sandboxId, "copyback", "workspace", "e2e", `${marker}.txt`), "utf8")).toBe(marker);
      await expect(readFile(path.join(base.host_path, "e2e", `${marker}.txt`), "utf8")).rejects.toThrow();

      // --- a member: the compact notice ---
      const member = await signedInPage(browser, "margaret@acme.test");
      await member.goto(`/companies/${ACME}/issues/${issueId}`);
      await expect(member.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
      const notice = member.getByTestId("recovery-notice");
      await expect(notice).toHaveAttribute("data-kind", "attention");
      await expect(notice.getByTestId("recovery-notice-message")).toContainText("kept failing");

      // --- a runtime manager: the hold on the Daytona allocation, its stop receipt and the retry call ---
      const manager = await signedInPage(browser, "linus@acme.test");
      await manager.goto(`/companies/${ACME}/issues/${issueId}`);
      await manager.getByTestId("recovery-details").locator("summary").click();
      const hold = manager.getByTestId("export-hold-details");
      await expect(hold).toHaveAttribute("data-kind", "retry_exhausted");
      await expect(hold.getByTestId("export-hold-run-error")).toHaveText("native_workspace_sync_out_retry_exhausted");
      await expect(hold.getByTestId("export-hold-allocation")).toHaveText(exhausted.providerLeaseId);
      await expect(hold.getByTestId("export-hold-receipt")).toContainText("environmentStopLease");
      await expect(hold.getByTestId("export-retry-api-call")).toContainText(`/api/issues/${issueId}/recovery-actions/retry-workspace-export`);

      // --- Retry export, through the route the details name ---
      const retried = await manager.request.post(`/api/issues/${issueId}/recovery-actions/retry-workspace-export`, {
        headers: { origin: baseURL ?? "" },
        data: { actionId: exhausted.actionId, runId, repairNote: "E2E: the emulator's uploads answer again; the sandbox was left as it is." },
      });
      expect(retried.status(), await retried.text()).toBe(200);

      // --- the same run committed the sandbox's file; the member's notice goes without a reload ---
      await expect(member.getByTestId("recovery-notice")).toHaveCount(0, { timeout: 90_000 });
      await expect(member.getByTestId("issue-header").getByTestId("issue-status")).toHaveText("In review", { timeout: 15_000 });
      expect(await readFile(path.join(base.host_path, "e2e", `${marker}.txt`), "utf8")).toBe(marker);
      const { rows: settled } = await sql.query<{ status: string; runs: string }>(
        `SELECT r.status::text AS status, (SELECT count(*) FROM heartbeat_runs WHERE native_issue_id = $2)::text AS runs FROM heartbeat_runs r WHERE r.id = $1`,
        [runId, issueId],
      );
      expect(settled[0]).toEqual({ status: "succeeded", runs: "1" });
      // Stopped and retained again (reusable), auto-delete still disabled.
      await until("the sandbox stopped again", async () => emulator.sandbox(sandboxId).state === "stopped", 30_000);
      expect(emulator.sandbox(sandboxId).autoDeleteInterval).toBe(-1);
    } finally {
      await sql.end().catch(() => undefined);
      await emulator.close();
      await rm(root, { recursive: true, force: true });
    }
  });
});
