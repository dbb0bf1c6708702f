// The export-only retry as board members see it (R-EX-1, R-EX-2, R-UI-2).
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
import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { ACME, databaseUrl, signedInPage, stageFailingExportRun, untilExportHoldRetained } from "./authenticated";

test.describe("export-only retry of an exhausted export", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage the rehearsal environment");

  test("a member sees the operator-attention notice without identifiers or form; a runtime manager sees the exact retry call; after the retry commits the notice is gone", async ({ browser, baseURL }) => {
    test.setTimeout(300_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      // --- a local environment with the rehearsal fault, an agent on it, a task and its run; the hold ---
      const marker = `exported-${Date.now()}`;
      const { issueId, runId, hostPath } = await stageFailingExportRun(sql, marker, { agent: `Exporter ${marker}`, task: `Export the work ${marker}` });
      const exhausted = await untilExportHoldRetained(sql, runId);

      // --- a member: the compact notice, no identifiers, no details, no form ---
      const member = await signedInPage(browser, "margaret@acme.test");
      await member.goto(`/companies/${ACME}/issues/${issueId}`);
      await expect(member.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
      const notice = member.getByTestId("recovery-notice");
      await expect(notice).toHaveAttribute("data-kind", "attention");
      await expect(notice.getByTestId("recovery-notice-message")).toContainText("kept failing");
      await expect(notice.getByRole("link", { name: "Inspect run" })).toHaveAttribute("href", new RegExp(`/runs/${runId}$`));
      await expect(member.getByTestId("recovery-details")).toHaveCount(0);
      await expect(notice.locator("form, input, textarea, select")).toHaveCount(0);
      const memberText = await member.locator("body").innerText();
      for (const secret of [exhausted.actionId, exhausted.leaseId, exhausted.providerLeaseId, "retry-workspace-export", "curl"]) expect(memberText).not.toContain(secret);

      // --- a runtime manager: Recovery details with the run, lease, allocation, receipt and exact call ---
      const manager = await signedInPage(browser, "linus@acme.test");
      await manager.goto(`/companies/${ACME}/issues/${issueId}`);
      await manager.getByTestId("recovery-details").locator("summary").click();
      const hold = manager.getByTestId("export-hold-details");
      await expect(hold).toHaveAttribute("data-kind", "retry_exhausted");
      await expect(hold.getByTestId("export-hold-run-error")).toHaveText("native_workspace_sync_out_retry_exhausted");
      await expect(hold.getByTestId("export-hold-allocation")).toHaveText(exhausted.providerLeaseId);
      await expect(hold.getByTestId("export-hold-receipt")).toContainText("environmentStopLease");
      await expect(hold.getByTestId("finalization-attempt")).toHaveCount(3);
      const apiCall = hold.getByTestId("export-retry-api-call");
      await expect(apiCall).toContainText(`/api/issues/${issueId}/recovery-actions/retry-workspace-export`);
      await expect(apiCall).toContainText(exhausted.actionId);
      await expect(apiCall).toContainText(runId);
      await expect(apiCall).toContainText("repairNote");
      const cli = hold.getByTestId("export-retry-cli");
      await expect(cli).toContainText("copyback recovery retry-export");
      await expect(cli).toContainText(`--issue ${issueId} --action ${exhausted.actionId} --run ${runId}`);

      // --- the retry through the REST route the details name ---
      const retried = await manager.request.post(`/api/issues/${issueId}/recovery-actions/retry-workspace-export`, {
        headers: { origin: baseURL ?? "" },
        data: { actionId: exhausted.actionId, runId, repairNote: "E2E: the rehearsal fault is spent; no file in the sandbox was touched." },
      });
      expect(retried.status(), await retried.text()).toBe(200);
      expect(await retried.json()).toMatchObject({ actionId: exhausted.actionId, runId });

      // --- the member's open page, without a reload: the notice goes once the same run committed ---
      await expect(member.getByTestId("recovery-notice")).toHaveCount(0, { timeout: 90_000 });
      await expect(member.getByTestId("issue-header").getByTestId("issue-status")).toHaveText("In review", { timeout: 15_000 });
      expect(await readFile(path.join(hostPath, "e2e", `${marker}.txt`), "utf8")).toBe(marker);
      const { rows: settled } = await sql.query<{ status: string; action_status: string; runs: string }>(
        `SELECT r.status::text AS status, a.status::text AS action_status, (SELECT count(*) FROM heartbeat_runs WHERE native_issue_id = $3)::text AS runs
         FROM heartbeat_runs r, issue_recovery_actions a WHERE r.id = $1 AND a.id = $2`,
        [runId, exhausted.actionId, issueId],
      );
      // The same run committed; no new run (no agent turn, no wake).
      expect(settled[0]).toEqual({ status: "succeeded", action_status: "resolved", runs: "1" });
    } finally {
      await sql.end().catch(() => undefined);
    }
  });
});
