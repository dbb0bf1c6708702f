// "Continue from saved sources" (NWF "Continue after confirmed source destruction"; R-RC-1..R-RC-3,
// R-RC-5, R-UI-3, R-UI-5) as board members use it. A real run of a real agent in a local sandbox
// whose environment carries the rehearsal fault `faults.failExports` ends in the exhausted-export
// hold with its accepted result saved and its sandbox stopped and retained (as
// auth-export-recovery). While the sandbox is retained there is no offer: the export path is the
// way (R-RC-1). A runtime manager then discards the sandbox on the Sandboxes page (the real
// Discard, with its confirmed destruction receipt); the task's notice now offers Continue from
// saved sources to them, never to a member. The manager selects the task's surviving attachment
// (uploaded on the task page into the launcher's attachment store), describes the missing work
// and records an external action's outcome; a task that changed since the form opened is refused
// inline and reloaded in place with nothing typed lost; the submission records one intent
// (attachment hash, outcomes, the status version seen) and the notice says the task is continuing
// from saved sources; another operator's open page stops offering the form without a reload (live
// updates of reconstruction_intents), and so stops asking for an operator, as does the member's;
// a file that operator attaches while the manager's form is open shows at once in the manager's
// Attachments list, the open form's sources and the member's list (live updates of issue_attachments),
// as does one that operator posts to the REST route as a form (multipart/form-data, as curl -F);
// the same request again adopts it. The worker delivers the intent as a fresh run of the
// agent (no replay: the old run, result and finalization are unchanged), the hold resolves and the
// open page loses the notice; after a reload the task shows normal work, no form is offered again,
// and the fresh session's result moves the task to review.
// Needs E2E_AUTH_DATABASE_URL (the database the authenticated launcher runs on).
import { expect, test } from "@playwright/test";
import { createHash } from "node:crypto";
import pg from "pg";
import { ACME, databaseUrl, signedInPage, stageFailingExportRun, until, untilExportHoldRetained } from "./authenticated";

test.describe("Continue from saved sources after a discarded sandbox", () => {
  test.skip(!databaseUrl, "E2E_AUTH_DATABASE_URL is needed to stage the rehearsal environment");

  test("R-RC-1 R-RC-2 R-RC-3 R-UI-3 R-UI-5 no offer while the sandbox is retained; after Discard a runtime manager continues from a saved attachment (a stale form refused inline, nothing lost), a repeat adopts the intent, the notice says it is continuing and another operator's open page loses the form live, a file the other operator attaches shows live in the open form and every open page, a fresh session is delivered and the reloaded task shows normal work; a member never sees a form", async ({ browser, baseURL }) => {
    test.setTimeout(300_000);
    const sql = new pg.Client({ connectionString: databaseUrl });
    await sql.connect();
    try {
      // --- a local environment with the rehearsal fault, an agent on it, a task and its run ---
      const marker = `reconstruct-${Date.now()}`;
      const { environmentId, agentId, issueId, runId } = await stageFailingExportRun(sql, marker, { agent: `Parser builder ${marker}`, task: `Build the parser ${marker}` });
      // The surviving source: the task's design notes (attached below on the task page).
      const bytes = Buffer.from(`# Parser design (${marker})\n\nTokens, grammar, error recovery.\n`);
      const sha256 = createHash("sha256").update(bytes).digest("hex");

      // --- three failing coordinator attempts, then the hold with the sandbox stopped and retained ---
      const exhausted = await untilExportHoldRetained(sql, runId);
      const taskUrl = `/companies/${ACME}/issues/${issueId}`;

      // --- R-RC-1: while the sandbox is retained, the export path is the way: no offer ---
      const manager = await signedInPage(browser, "linus@acme.test");
      await manager.goto(taskUrl);
      // The surviving source is attached through the product: the task page's upload control
      // (POST /api/issues/:id/attachments), its hash shown short in the list.
      await manager.getByTestId("attachment-input").setInputFiles({ name: "parser-design.md", mimeType: "text/markdown", buffer: bytes });
      await expect(manager.getByTestId("attachment").filter({ hasText: "parser-design.md" })).toContainText(sha256.slice(0, 12));
      const stored = await sql.query<{ id: string; sha256: string; size_bytes: string; content_type: string }>(`SELECT id, sha256, size_bytes::text, content_type FROM issue_attachments WHERE issue_id = $1`, [issueId]);
      expect(stored.rows).toEqual([{ id: expect.any(String), sha256, size_bytes: String(bytes.length), content_type: "text/markdown" }]);
      const attachmentId = stored.rows[0]!.id;
      await expect(manager.getByTestId("recovery-notice")).toHaveAttribute("data-kind", "attention");
      await manager.getByTestId("recovery-details").locator("summary").click();
      await expect(manager.getByTestId("export-hold-details")).toHaveAttribute("data-kind", "retry_exhausted");
      await expect(manager.getByTestId("reconstruction-offer")).toHaveCount(0);
      await expect(manager.getByText("Continue from saved sources")).toHaveCount(0);

      // --- the real Discard, on the Sandboxes page ---
      await manager.goto(`/companies/${ACME}/sandboxes`);
      const row = manager.getByTestId("sandbox-row").filter({ hasText: exhausted.providerLeaseId });
      await expect(row).toHaveCount(1);
      await row.getByTestId("sandbox-discard-open").click();
      await row.getByTestId("sandbox-discard-allocation").fill(exhausted.providerLeaseId);
      await row.getByRole("checkbox").check();
      await row.getByTestId("sandbox-discard-reason").fill(`${marker}: the sandbox cannot be repaired; rebuild from the design notes`);
      await row.getByTestId("sandbox-discard-submit").click();
      await expect(manager.getByTestId("sandbox-row").filter({ hasText: exhausted.providerLeaseId })).toHaveCount(0, { timeout: 30_000 });
      const destroyed = await sql.query<{ status: string; metadata: { sandboxDestructionReceipt?: { confirmed?: boolean } } }>(`SELECT status::text AS status, metadata FROM environment_leases WHERE id = $1`, [exhausted.leaseId]);
      expect(destroyed.rows[0]?.status).toBe("destroyed");
      expect(destroyed.rows[0]?.metadata.sandboxDestructionReceipt?.confirmed).toBe(true);
      // The rehearsal is over: the fresh session's exports succeed.
      await sql.query(`UPDATE environments SET config = config - 'faults' WHERE id = $1`, [environmentId]);

      // What the reconstruction must leave as it is (R-RC-3): the old run, its result, its finalization.
      const oldRun = async () =>
        (
          await sql.query(
            `SELECT r.status::text AS status, r.error_code, r.result_json, r.finished_at, f.phase::text AS phase, f.attempt, f.failure_code, f.result_id,
                    (SELECT json_agg(json_build_object('id', x.id, 'status', x.schema_status::text, 'sha', x.canonical_sha256)) FROM native_run_results x WHERE x.run_id = r.id) AS results
             FROM heartbeat_runs r JOIN native_run_finalizations f ON f.run_id = r.id WHERE r.id = $1`,
            [runId],
          )
        ).rows[0];
      const before = await oldRun();
      expect(before).toMatchObject({ error_code: "native_workspace_sync_out_retry_exhausted" });
      expect(before.results).toEqual([expect.objectContaining({ status: "accepted" })]);

      // --- R-UI-3 R-UI-5: a member never gets the offer or a form ---
      const member = await signedInPage(browser, "margaret@acme.test");
      // Not even asked: the offer's query is sent only by viewers who received Recovery details.
      const memberAsked: string[] = [];
      member.on("request", (request) => {
        if (request.url().includes("recovery.reconstructionOffer")) memberAsked.push(request.url());
      });
      await member.goto(taskUrl);
      await expect(member.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
      await expect(member.getByTestId("recovery-notice")).toHaveAttribute("data-kind", "attention");
      await expect(member.getByTestId("reconstruction-offer")).toHaveCount(0);
      await expect(member.getByTestId("recovery-notice").locator("form, input, textarea, select, button")).toHaveCount(0);
      expect(memberAsked).toEqual([]);

      // --- another operator (an administrator: runtime:manage too) has the task open, the offer in sight ---
      const otherManager = await signedInPage(browser, "grace@acme.test");
      await otherManager.goto(taskUrl);
      await expect(otherManager.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
      await expect(otherManager.getByTestId("recovery-notice").getByTestId("reconstruction-open")).toBeVisible({ timeout: 15_000 });

      // --- the runtime manager: the offer in the notice, the form ---
      await manager.goto(taskUrl);
      const notice = manager.getByTestId("recovery-notice");
      await expect(notice.getByTestId("reconstruction-offer")).toBeVisible({ timeout: 15_000 });
      await notice.getByRole("button", { name: "Continue from saved sources" }).click();
      const form = notice.getByTestId("reconstruction-form");
      await expect(form.getByTestId("reconstruction-statement")).toContainText("This is reconstruction, not recovery of the missing edits");
      await expect(form.getByTestId("reconstruction-attachment")).toHaveCount(1);
      await expect(form.getByText(`parser-design.md · ${bytes.length} B · sha256 ${sha256.slice(0, 12)}`)).toBeVisible();

      // --- R-RC-3 R-UI-3: the other operator attaches a second file on their open page; it shows on
      // every open page of the task without a reload (live updates of issue_attachments): in the
      // manager's Attachments list and open form, and in the member's list ---
      const apiBytes = Buffer.from(`# API notes (${marker})\n\nparse(source): Ast\n`);
      const apiSha256 = createHash("sha256").update(apiBytes).digest("hex");
      await otherManager.getByTestId("attachment-input").setInputFiles({ name: "api-notes.md", mimeType: "text/markdown", buffer: apiBytes });
      await expect(otherManager.getByTestId("attachment").filter({ hasText: "api-notes.md" })).toContainText(apiSha256.slice(0, 12));
      await expect(manager.getByTestId("attachment").filter({ hasText: "api-notes.md" })).toContainText(apiSha256.slice(0, 12), { timeout: 10_000 });
      await expect(member.getByTestId("attachment").filter({ hasText: "api-notes.md" })).toContainText(apiSha256.slice(0, 12), { timeout: 10_000 });
      await expect(form.getByTestId("reconstruction-attachment")).toHaveCount(2, { timeout: 10_000 });
      await expect(form.getByText(`api-notes.md · ${apiBytes.length} B · sha256 ${apiSha256.slice(0, 12)}`)).toBeVisible();
      // And one through the REST route as a form (multipart/form-data, what curl -F sends), from the
      // other operator's session: the same answer, and it too shows at once on the manager's page.
      const grammar = Buffer.from(`expr = term { "+" term } ; (* ${marker} *)\n`);
      const viaForm = await otherManager.request.post(`/api/issues/${issueId}/attachments`, {
        headers: { origin: baseURL ?? "" },
        multipart: { file: { name: "grammar.ebnf", mimeType: "text/plain", buffer: grammar } },
      });
      expect(viaForm.status(), await viaForm.text()).toBe(201);
      expect(await viaForm.json()).toMatchObject({ fileName: "grammar.ebnf", contentType: "text/plain", sizeBytes: grammar.length, sha256: createHash("sha256").update(grammar).digest("hex") });
      await expect(manager.getByTestId("attachment").filter({ hasText: "grammar.ebnf" })).toHaveCount(1, { timeout: 10_000 });
      await expect(form.getByTestId("reconstruction-attachment")).toHaveCount(3, { timeout: 10_000 });
      // The form stayed open through the refetch: the operator continues from the design notes only.
      const attachment = form.locator(`[data-testid=reconstruction-attachment][value="${attachmentId}"]`);
      await expect(attachment).toHaveCount(1);
      // An empty draft says what is missing, and sends nothing.
      await form.getByTestId("reconstruction-submit").click();
      await expect(form.getByTestId("reconstruction-problems")).toContainText("Describe the work that was lost.");
      await attachment.check();
      const description = `${marker}: rebuild src/parser.ts from the design notes; the tokenizer and the grammar were lost with the sandbox.`;
      await form.getByTestId("reconstruction-description").fill(description);
      await form.getByTestId("reconstruction-outcome-add").click();
      await form.getByTestId("reconstruction-outcome-add").click();
      await expect(form.getByTestId("reconstruction-outcome")).toHaveCount(2);
      await form.getByTestId("reconstruction-outcome-remove").nth(1).click();
      await expect(form.getByTestId("reconstruction-outcome")).toHaveCount(1);
      await form.getByTestId("reconstruction-outcome-action").fill("Opened a pull request for the parser");
      await form.getByTestId("reconstruction-outcome-select").selectOption("not_performed");
      await form.getByTestId("reconstruction-outcome-evidence").fill("The repository shows no pull request from the agent.");

      // --- R-RC-2: the task changes while the form is open (another operator's edit): refused inline, nothing lost ---
      await sql.query(`UPDATE issues SET status_version = status_version + 1 WHERE id = $1`, [issueId]);
      await form.getByTestId("reconstruction-submit").click();
      await expect(form.getByTestId("reconstruction-error")).toHaveText(/^The task changed since you opened it; reload/, { timeout: 15_000 });
      await expect(form.getByTestId("reconstruction-description")).toHaveValue(description);
      await expect(attachment).toBeChecked();
      await expect(form.getByTestId("reconstruction-outcome-select")).toHaveValue("not_performed");
      expect((await sql.query(`SELECT 1 FROM reconstruction_intents WHERE issue_id = $1`, [issueId])).rowCount).toBe(0);

      // --- the operator reloads the task from the form: the fields are still as typed; submit ---
      await form.getByTestId("reconstruction-reload").click();
      await expect(form.getByTestId("reconstruction-error")).toHaveCount(0);
      await expect(form.getByTestId("reconstruction-description")).toHaveValue(description);
      await expect(attachment).toBeChecked();
      await expect(form.locator("[data-testid=reconstruction-attachment]:checked")).toHaveCount(1);
      await expect(form.getByTestId("reconstruction-outcome-action")).toHaveValue("Opened a pull request for the parser");
      await expect(form.getByTestId("reconstruction-outcome-evidence")).toHaveValue("The repository shows no pull request from the agent.");
      // A double-click: the form's one requestId makes the second request adopt the first intent.
      await form.getByTestId("reconstruction-submit").dblclick();
      // The worker's delivery pass comes within seconds. To see the state between the record and the
      // delivery, the test holds the recorded intent's row lock (the delivery locks it first and
      // waits; the console's reads take no lock), taken the moment the row is committed.
      const holder = new pg.Client({ connectionString: databaseUrl });
      await holder.connect();
      const heldPending = await until(
        "the recorded intent, locked",
        async () => {
          await holder.query("BEGIN");
          const locked = await holder.query<{ status: string }>(`SELECT status::text AS status FROM reconstruction_intents WHERE issue_id = $1 FOR UPDATE`, [issueId]);
          const status = locked.rows[0]?.status;
          if (status === "pending") return "pending";
          await holder.query("ROLLBACK");
          return status === undefined ? null : "already delivered";
        },
        15_000,
      ).catch(async (error: unknown) => {
        await holder.end().catch(() => undefined);
        throw error;
      });
      test.info().annotations.push({ type: "intent seen before its delivery", description: heldPending });
      const state = notice.getByTestId("reconstruction-intent");
      await expect(state).toHaveText(/^Continuing from saved sources: a fresh session will start\./, { timeout: 15_000 });
      await expect(notice.getByTestId("reconstruction-form")).toHaveCount(0);
      await expect(notice.getByTestId("reconstruction-open")).toHaveCount(0);
      // Live updates (the reconstruction_intents trigger; recording changes no other table the pages
      // listen to): the other operator's open page stops offering the form and, like the member's,
      // stops asking for an operator, without a reload.
      const noticeState = (page: typeof manager) => async () => {
        const current = page.getByTestId("recovery-notice");
        if ((await current.count()) === 0) return "gone";
        return `${await current.getAttribute("data-kind")}: ${await current.locator("p[role=status], [data-testid=recovery-notice-message]").first().textContent()}`;
      };
      try {
        // R-RC-3 R-UI-1: while the intent waits, the notice says the task is continuing (no operator needed).
        // In the rare case the delivery won the race for the lock, the hold is resolved and the notices go.
        const expected = heldPending === "pending" ? /^restoring: Continuing from saved sources…$/ : /^gone$/;
        for (const page of [manager, otherManager, member]) await expect.poll(noticeState(page), { timeout: 15_000 }).toMatch(expected);
        await expect(otherManager.getByTestId("reconstruction-open")).toHaveCount(0);
        if (heldPending === "pending") await expect(otherManager.getByTestId("reconstruction-intent")).toHaveText(/^Continuing from saved sources: a fresh session will start\./);
      } finally {
        await holder.query("COMMIT").catch(() => undefined);
        await holder.end().catch(() => undefined);
      }

      const { rows: intents } = await sql.query<{
        id: string;
        request_id: string;
        source_run_id: string;
        lease_id: string;
        recovery_action_id: string;
        attachment_hashes: { attachmentId: string; sha256: string; sizeBytes: number }[];
        external_action_outcomes: { observed?: unknown };
        description: string;
        source_status_version: number;
        status_version: number;
      }>(
        `SELECT ri.id, ri.request_id, ri.source_run_id, ri.lease_id, ri.recovery_action_id, ri.attachment_hashes, ri.external_action_outcomes,
                ri.description, ri.source_status_version, i.status_version
         FROM reconstruction_intents ri JOIN issues i ON i.id = ri.issue_id WHERE ri.issue_id = $1`,
        [issueId],
      );
      // R-RC-3: one intent (the double-click sent one request), with the exact source, the stored
      // bytes' hash, the outcomes as recorded and the status version the operator saw.
      expect(intents).toHaveLength(1);
      const intent = intents[0]!;
      expect(intent).toMatchObject({ source_run_id: runId, lease_id: exhausted.leaseId, recovery_action_id: exhausted.actionId, description });
      expect(intent.attachment_hashes).toEqual([{ attachmentId, sha256, sizeBytes: bytes.length }]);
      expect(intent.external_action_outcomes.observed).toEqual([{ action: "Opened a pull request for the parser", outcome: "not_performed", evidence: "The repository shows no pull request from the agent." }]);

      // --- R-RC-3: the same request again (a retry of the form's own call, its requestId) adopts the first intent ---
      const body = {
        companyId: ACME,
        issueId,
        actionId: exhausted.actionId,
        sourceRunId: runId,
        leaseId: exhausted.leaseId,
        attachmentIds: [attachmentId],
        description,
        externalActionOutcomes: [{ action: "Opened a pull request for the parser", outcome: "not_performed", evidence: "The repository shows no pull request from the agent." }],
        sourceStatusVersion: intent.source_status_version,
        requestId: intent.request_id,
      };
      const repeated = await manager.request.post(`/api/trpc/recovery.reconstructWorkspace`, { headers: { origin: baseURL ?? "" }, data: { json: body } });
      expect(repeated.status(), await repeated.text()).toBe(200);
      expect(await repeated.json()).toMatchObject({ result: { data: { json: { kind: "adopted", intent: { id: intent.id } } } } });
      // And through the documented REST route (R-RC-2), the same body: 200, the first intent.
      const { companyId: _company, issueId: _issue, ...restBody } = body;
      const viaRest = await manager.request.post(`/api/issues/${issueId}/recovery-actions/reconstruct-workspace`, { headers: { origin: baseURL ?? "" }, data: restBody });
      expect(viaRest.status(), await viaRest.text()).toBe(200);
      expect(await viaRest.json()).toMatchObject({ kind: "adopted", intent: { id: intent.id } });
      expect((await sql.query(`SELECT 1 FROM reconstruction_intents WHERE issue_id = $1`, [issueId])).rowCount).toBe(1);

      // --- the intent is delivered as a fresh session: the hold resolves, the open page loses the notice ---
      const delivered = await until(
        "the intent delivered as a fresh run",
        async () => (await sql.query<{ run_id: string }>(`SELECT delivered_run_id AS run_id FROM reconstruction_intents WHERE id = $1 AND status = 'delivered'`, [intent.id])).rows[0],
        60_000,
      );
      await expect(manager.getByTestId("recovery-notice")).toHaveCount(0, { timeout: 15_000 });
      const { rows: fresh } = await sql.query<{ agent_id: string; predecessor_run_id: string | null }>(`SELECT agent_id, predecessor_run_id FROM heartbeat_runs WHERE id = $1`, [delivered.run_id]);
      // A fresh session of the same agent, not a replay of the old run.
      expect(delivered.run_id).not.toBe(runId);
      expect(fresh[0]).toEqual({ agent_id: agentId, predecessor_run_id: null });
      const { rows: hold } = await sql.query<{ status: string }>(`SELECT status::text AS status FROM issue_recovery_actions WHERE id = $1`, [exhausted.actionId]);
      expect(hold[0]?.status).toBe("resolved");
      // The old run, its result and its failed finalization stay as they were.
      expect(await oldRun()).toEqual(before);

      // --- a reload keeps it: normal work, no notice, no form offered again; the fresh session finishes ---
      await manager.reload();
      await expect(manager.getByTestId("issue-header")).toBeVisible();
      await expect(manager.getByTestId("recovery-notice")).toHaveCount(0);
      await expect(manager.getByTestId("reconstruction-form")).toHaveCount(0);
      await expect(manager.getByTestId("issue-header").getByTestId("issue-status")).toHaveText("In review", { timeout: 90_000 });
      const { rows: done } = await sql.query<{ status: string }>(`SELECT status::text AS status FROM heartbeat_runs WHERE id = $1`, [delivered.run_id]);
      expect(done[0]?.status).toBe("succeeded");

      // --- the member's page: normal work, never a form ---
      await member.reload();
      await expect(member.getByTestId("issue-header")).toBeVisible();
      await expect(member.getByTestId("recovery-notice")).toHaveCount(0);
      await expect(member.getByTestId("reconstruction-form")).toHaveCount(0);
    } finally {
      await sql.end().catch(() => undefined);
    }
  });
});
