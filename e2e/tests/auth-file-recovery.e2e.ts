// The file-recovery form (R-UI-2, R-UI-4, R-UI-5, R-RR-5) as board members see it.
// A task holds two file holds, staged in the authenticated launcher's database the way the recovery
// core leaves them: a cancelled native run's file-recovery obligation and a failed legacy run's
// repair hold, each with its lease stopped and released with the provider's receipt. A runtime
// manager finds the form under Recovery details (the no-external-actions confirmation unchecked by
// default, only for the cancelled native run; changing the source clears the evidence and the
// confirmation) and records one repair through it without the task's status changing; a member
// sees the compact notice with Inspect run and no form at all.
// Needs E2E_AUTH_DATABASE_URL (the database the authenticated launcher runs on).
import { expect, test } from "@playwright/test";
import { randomUUID } from "node:crypto";
import pg from "pg";
import { ACME, databaseUrl, signedInPage } from "./authenticated";

interface Staged {
  issueId: string;
  cancelled: { runId: string; leaseId: string; actionId: string; providerLeaseId: string };
  legacy: { runId: string; leaseId: string; actionId: string; providerLeaseId: string };
}

/** Two file holds on one blocked task, as core's writers leave them (evidence schemas, receipts, retained source). */
async function stage(sql: pg.Client): Promise<Staged> {
  const { rows: places } = await sql.query<{ agent_id: string; environment_id: string }>(
    `SELECT id AS agent_id, environment_id FROM agents WHERE company_id = $1 AND name = 'Builder' LIMIT 1`,
    [ACME],
  );
  const place = places[0];
  if (!place) throw new Error("the demo company has no Builder: was the seed applied?");
  const issueId = randomUUID();
  await sql.query(
    `WITH n AS (UPDATE companies SET issue_counter = issue_counter + 1 WHERE id = $1 RETURNING issue_counter)
     INSERT INTO issues (id, company_id, number, identifier, title, status, status_version, conversation_generation, assignee_agent_id)
     SELECT $2, $1, n.issue_counter, 'ACME-' || n.issue_counter, $3, 'blocked', 4, 2, $4 FROM n`,
    [ACME, issueId, `Recover the kept files ${Date.now()}`, place.agent_id],
  );
  const now = new Date().toISOString();
  const source = async (kind: "cancelled" | "legacy") => {
    const runId = randomUUID();
    const leaseId = randomUUID();
    const providerLeaseId = `sbx-e2e-${randomUUID().slice(0, 8)}`;
    await sql.query(
      `INSERT INTO heartbeat_runs (id, company_id, agent_id, native_issue_id, runtime_mode, status, error_code, finished_at, runner_profile_json)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now(), $8)`,
      [
        runId, ACME, place.agent_id, issueId, kind === "legacy" ? "legacy" : "native", kind === "legacy" ? "failed" : "cancelled",
        kind === "legacy" ? "legacy_workspace_copyback_failed" : "run_stopped",
        JSON.stringify(kind === "cancelled" ? { stopAcknowledgement: { schema: "copyback.run-stop-acknowledgement.v1", requestId: randomUUID(), acknowledgedAt: now, by: "executor", controller: null, agent: null, leaseId } } : {}),
      ],
    );
    const receipt = { schema: "copyback.sandbox-stop-and-retain-receipt.v1", method: "builtin.stopLease", requestId: randomUUID(), pluginId: "builtin.fake", providerLeaseId, stoppedAt: now };
    const retained = { schema: "copyback.retained-source.v1", companyId: ACME, runId, leaseId, providerLeaseId, pluginId: "builtin.fake", originalPolicy: "ephemeral", reason: "legacy_copyback_failed", recordedAt: now };
    await sql.query(
      `INSERT INTO environment_leases (id, company_id, environment_id, run_id, issue_id, provider, plugin_id, provider_lease_id, lease_policy, status, released_at, metadata)
       VALUES ($1, $2, $3, $4, $5, 'fake', 'builtin.fake', $6, $7, 'released', now(), $8)`,
      [leaseId, ACME, place.environment_id, runId, issueId, providerLeaseId, kind === "legacy" ? "retain_on_failure" : "ephemeral",
        JSON.stringify(kind === "legacy" ? { sandboxStopAndRetainReceipt: receipt, retainedSource: retained } : { sandboxStopAndRetainReceipt: receipt })],
    );
    const evidence =
      kind === "legacy"
        ? { schema: "copyback.legacy-copyback-repair-evidence.v1", runId, leaseId, leaseIds: [leaseId], providerLeaseId, pluginId: "builtin.fake", path: "copyback_failed", failureCode: "workspace_merge_conflict", hostWritesStarted: false, detectedAt: now }
        : { schema: "copyback.file-recovery-evidence.v1", runId, leaseId, leaseIds: [leaseId], providerLeaseId, pluginId: "builtin.fake", origin: "agent_exited", failureCode: "run_stopped", agentProcess: null, agentStop: null, pin: "already_pinned", detectedAt: now };
    const actionId = randomUUID();
    await sql.query(
      `INSERT INTO issue_recovery_actions (id, company_id, issue_id, run_id, lease_id, cause, fingerprint, owner_type, status, evidence, next_action, wake_policy, updated_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'board', 'active', $8, 'Recover the files of this exact allocation.', '{"automaticWake": false}', now(), now() - $9::interval)`,
      [actionId, ACME, issueId, runId, leaseId, kind === "legacy" ? "legacy_workspace_copyback_repair_required" : "native_workspace_file_recovery_required",
        kind === "legacy" ? `${runId}:legacy-copyback:${leaseId}` : `${runId}:files`, JSON.stringify(evidence), kind === "cancelled" ? "2 minutes" : "1 minute"],
    );
    return { runId, leaseId, actionId, providerLeaseId };
  };
  const cancelled = await source("cancelled");
  const legacy = await source("legacy");
  return { issueId, cancelled, legacy };
}

test.describe("the file-recovery form", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage the file holds");

  test("R-UI-4 R-UI-2 R-UI-5 an operator's form: confirmation unchecked by default, cleared with the evidence on a source change, records a repair without changing the task; a member gets no form", async ({ browser }) => {
    test.setTimeout(120_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      const staged = await stage(sql);
      const taskUrl = `/companies/${ACME}/issues/${staged.issueId}`;

      // --- a member: the compact notice with Inspect run, nothing to certify, no form ---
      const member = await signedInPage(browser, "margaret@acme.test");
      await member.goto(taskUrl);
      const memberNotice = member.getByTestId("recovery-notice");
      await expect(memberNotice).toHaveAttribute("data-kind", "attention");
      await expect(memberNotice.getByRole("link", { name: "Inspect run" })).toHaveAttribute("href", new RegExp(`/runs/${staged.cancelled.runId}$`));
      await expect(member.getByTestId("recovery-details")).toHaveCount(0);
      await expect(member.getByTestId("file-recovery-form")).toHaveCount(0);

      // --- a runtime manager: the form under Recovery details ---
      const operator = await signedInPage(browser, "linus@acme.test");
      await operator.goto(taskUrl);
      await operator.getByTestId("recovery-details").locator("summary").click();
      const form = operator.getByTestId("file-recovery-form");
      await expect(form).toBeVisible();
      const sourceSelect = form.getByTestId("file-recovery-source");
      await expect(sourceSelect).toHaveValue(staged.cancelled.actionId);
      await expect(sourceSelect.locator("option")).toHaveCount(2);
      // The default: the confirmation is offered for the cancelled native run, unchecked.
      const confirmation = form.getByTestId("file-recovery-no-external-actions");
      await expect(confirmation).not.toBeChecked();
      const stopEvidence = form.getByTestId("file-recovery-stop-evidence");
      const recoveredFiles = form.getByTestId("file-recovery-recovered-files");
      await expect(stopEvidence).toHaveValue("");
      await expect(form.getByTestId("file-recovery-submit")).toBeDisabled();

      // Changing the source clears the evidence and the confirmation.
      await stopEvidence.fill("The provider console shows the allocation stopped.");
      await recoveredFiles.fill("notes.md copied back by hand.");
      await confirmation.check();
      await sourceSelect.selectOption(staged.legacy.actionId);
      await expect(stopEvidence).toHaveValue("");
      await expect(recoveredFiles).toHaveValue("");
      // A legacy run is not a cancelled native run: no confirmation is offered.
      await expect(form.getByTestId("file-recovery-no-external-actions")).toHaveCount(0);
      await sourceSelect.selectOption(staged.cancelled.actionId);
      await expect(form.getByTestId("file-recovery-no-external-actions")).not.toBeChecked();
      await expect(stopEvidence).toHaveValue("");

      // Record the legacy repair; the task keeps its status, owner and conversation.
      await sourceSelect.selectOption(staged.legacy.actionId);
      await stopEvidence.fill(`Allocation ${staged.legacy.providerLeaseId} stopped (provider receipt).`);
      await recoveredFiles.fill("src/app.ts restored from the retained sandbox.");
      await form.getByTestId("file-recovery-submit").click();
      await expect(form.getByTestId("file-recovery-source").locator("option")).toHaveCount(1, { timeout: 15_000 });
      const { rows } = await sql.query<{ status: string; outcome: string; issue_status: string; status_version: number; generation: number }>(
        `SELECT a.status::text AS status, a.outcome, i.status::text AS issue_status, i.status_version, i.conversation_generation AS generation
         FROM issue_recovery_actions a JOIN issues i ON i.id = a.issue_id WHERE a.id = $1`,
        [staged.legacy.actionId],
      );
      expect(rows[0]).toEqual({ status: "resolved", outcome: "restored", issue_status: "blocked", status_version: 4, generation: 2 });
      const lease = await sql.query<{ status: string }>(`SELECT status::text AS status FROM environment_leases WHERE id = $1`, [staged.legacy.leaseId]);
      expect(lease.rows[0]?.status).toBe("released");
    } finally {
      await sql.end().catch(() => undefined);
    }
  });
});
