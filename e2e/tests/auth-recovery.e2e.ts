// Recovery of an interrupted copyback, as board members see it (R-UI-1, R-UI-2, R-UI-5,
// R-ATT-1..3). A real run of a real agent in a local sandbox is brought to the state a worker that
// died mid-copy leaves behind: the test holds the run's finalization advisory lock while the agent
// works (the live finalizer finds it busy and leaves the run), then writes the owner receipt of a
// controller that no longer exists on this host and releases the lock. The launcher's own
// reconciler then judges the receipt (dead controller, no success barrier) and opens the
// unverified-owner hold. A member sees a calm notice without identifiers; an administrator
// attests the stop through the REST API; the member's open page shows "Restoring saved work…",
// and the notice is gone once the same run committed its files.
// Needs E2E_AUTH_DATABASE_URL (the database the authenticated launcher runs on).
import { expect, test } from "@playwright/test";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { ACME, databaseUrl, signedInPage, until } from "./authenticated";

/** A PID far above any the kernel hands out here (pid_max is 4194304 at most): no such process. */
const DEAD_PID = 4_194_301;

test.describe("recovery of an interrupted copyback", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage the crashed controller's receipt");

  test("a member sees the notice without identifiers; after an administrator's attestation it says Restoring saved work…, and it is gone once the run committed", async ({ browser, baseURL }) => {
    test.setTimeout(180_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    const lock = new pg.Client({ connectionString: databaseUrl });
    await lock.connect();
    try {
      // --- a task whose agent works for a few seconds, then writes a file and its result ---
      const { rows: envRows } = await sql.query<{ environment_id: string; workspace_id: string; host_path: string }>(
        `SELECT a.environment_id, w.id AS workspace_id, w.host_path FROM agents a, execution_workspaces w
         WHERE a.company_id = $1 AND a.name = 'Builder' AND w.company_id = $1 LIMIT 1`,
        [ACME],
      );
      const env = envRows[0];
      if (!env) throw new Error("the demo company has no Builder or workspace: was the seed applied?");
      const agentId = randomUUID();
      const marker = `restored-${Date.now()}`;
      const result = JSON.stringify({ schema: "copyback.run-result.v1", outcome: "in_review", summary: "Recovered work." });
      await sql.query(
        `INSERT INTO agents (id, company_id, name, command, adapter_config, environment_id) VALUES ($1, $2, $3, $4, '{"timeoutSeconds": 120}', $5)`,
        [agentId, ACME, `Recoverer ${marker}`, ["/bin/sh", "-c", `sleep 5 && mkdir -p e2e && printf '${marker}' > e2e/${marker}.txt && printf '%s' '${result}' > "$COPYBACK_RESULT_FILE"`], env.environment_id],
      );
      const { rows: issueRows } = await sql.query<{ id: string; identifier: string }>(
        `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
         INSERT INTO issues (id, company_id, number, identifier, title, status, assignee_agent_id, execution_workspace_id)
         SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'todo', $4, $5 FROM n RETURNING id, identifier`,
        [ACME, randomUUID(), `Recover the interrupted copyback ${marker}`, agentId, env.workspace_id],
      );
      const issue = issueRows[0]!;
      const runId = randomUUID();
      await sql.query(`INSERT INTO heartbeat_runs (id, company_id, agent_id, native_issue_id, runtime_mode, status) VALUES ($1, $2, $3, $4, 'native', 'queued')`, [runId, ACME, agentId, issue.id]);

      // --- the crash: the live finalizer finds the lock busy; the receipt of a gone controller stays ---
      await until("the run to start", async () => (await sql.query(`SELECT 1 FROM heartbeat_runs WHERE id = $1 AND status = 'running'`, [runId])).rowCount, 60_000);
      await lock.query(`SELECT pg_advisory_lock(hashtextextended($1, 0))`, [`native-workspace-finalization:${ACME}:${runId}`]);
      await until("the live finalizer to give up", async () => (await sql.query(`SELECT 1 FROM run_events WHERE run_id = $1 AND code = 'finalization.busy'`, [runId])).rowCount, 60_000);
      const token = `e2e-${randomUUID()}`;
      const receipt = { token, host: os.hostname(), pid: DEAD_PID, processStart: "1234567", bootId: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() };
      await sql.query(`UPDATE heartbeat_runs SET runner_profile_json = runner_profile_json || jsonb_build_object('nativeWorkspaceFinalizationOwner', $2::jsonb) WHERE id = $1`, [runId, JSON.stringify(receipt)]);
      await sql.query(`UPDATE native_run_finalizations SET phase = 'workspace_finalizing', attempt = 1 WHERE run_id = $1`, [runId]);
      await lock.query(`SELECT pg_advisory_unlock(hashtextextended($1, 0))`, [`native-workspace-finalization:${ACME}:${runId}`]);

      // --- the launcher's reconciler opens exactly one hold ---
      const action = await until(
        "the unverified-owner hold",
        async () => (await sql.query<{ id: string }>(`SELECT id FROM issue_recovery_actions WHERE run_id = $1 AND cause = 'native_workspace_finalization_owner_unverified' AND status = 'active'`, [runId])).rows[0],
        60_000,
      );
      // A delay the old controller recorded: the attested copyback waits for it (R-ATT-3: the
      // schedule is kept), so "Restoring saved work…" stays on screen long enough to be seen.
      await sql.query(`UPDATE native_run_finalizations SET phase = 'retryable_failure', next_attempt_at = now() + interval '12 seconds' WHERE run_id = $1`, [runId]);

      // --- a member: the calm notice, no identifiers, no details, Wake agent says why ---
      const member = await signedInPage(browser, "margaret@acme.test");
      await member.goto(`/companies/${ACME}/issues/${issue.id}`);
      await expect(member.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
      const notice = member.getByTestId("recovery-notice");
      await expect(notice).toHaveAttribute("data-kind", "attention");
      await expect(notice.getByTestId("recovery-notice-message")).toContainText("interrupted");
      await expect(notice.getByRole("link", { name: "Inspect run" })).toHaveAttribute("href", new RegExp(`/runs/${runId}$`));
      await expect(member.getByTestId("recovery-details")).toHaveCount(0);
      const memberText = await member.locator("body").innerText();
      for (const secret of [token, String(DEAD_PID), receipt.host, receipt.bootId]) expect(memberText).not.toContain(secret);
      await expect(member.getByTestId("agent-panel").getByRole("button", { name: "Wake agent" })).toBeDisabled();
      await expect(member.getByTestId("wake-reason")).toContainText("waiting for recovery");
      // The held run is not "Working".
      await expect(member.getByTestId("agent-run-chip")).toHaveText("Waiting for an operator");
      await expect(member.getByRole("button", { name: /shut ?down|resume/i })).toHaveCount(0);

      // The board shows the chip.
      const board = await (await member.context().newPage());
      await board.goto(`/companies/${ACME}/issues`);
      await expect(board.getByTestId("issue-row").filter({ hasText: issue.identifier })).toContainText("Needs attention");
      await board.close();

      // --- an administrator: Recovery details with the prefilled call; the attestation ---
      const admin = await signedInPage(browser, "grace@acme.test");
      await admin.goto(`/companies/${ACME}/issues/${issue.id}`);
      await admin.getByTestId("recovery-details").locator("summary").click();
      const apiCall = admin.getByTestId("recovery-api-call");
      await expect(apiCall).toContainText(action.id);
      await expect(apiCall).toContainText(runId);
      await expect(apiCall).toContainText(token);
      const attested = await admin.request.post(`/api/issues/${issue.id}/recovery-actions/resume-workspace-finalization`, {
        headers: { origin: baseURL ?? "" },
        data: { actionId: action.id, runId, ownerToken: token, controllerAndCopybackStopped: true, stopEvidence: `E2E: pid ${DEAD_PID} does not exist on ${receipt.host}` },
      });
      expect(attested.status(), await attested.text()).toBe(200);
      expect(await attested.json()).toMatchObject({ actionId: action.id, runId, status: "attested" });

      // --- the member's open page, without a reload: restoring, then nothing; the files are home ---
      await expect(notice).toHaveAttribute("data-kind", "restoring", { timeout: 15_000 });
      await expect(notice).toContainText("Restoring saved work…");
      await expect(member.getByTestId("recovery-notice")).toHaveCount(0, { timeout: 60_000 });
      await expect(member.getByTestId("issue-header").getByTestId("issue-status")).toHaveText("In review", { timeout: 15_000 });
      expect(await readFile(path.join(env.host_path, "e2e", `${marker}.txt`), "utf8")).toBe(marker);
      const { rows: settled } = await sql.query<{ status: string; resolved_by_type: string }>(
        `SELECT r.status::text AS status, a.resolved_by_type::text AS resolved_by_type FROM heartbeat_runs r, issue_recovery_actions a WHERE r.id = $1 AND a.id = $2`,
        [runId, action.id],
      );
      expect(settled[0]).toEqual({ status: "succeeded", resolved_by_type: "system" });
    } finally {
      await lock.end().catch(() => undefined);
      await sql.end().catch(() => undefined);
    }
  });
});
