// An agent run end to end from the console: assign the demo agent to a demo task, wake
// it, watch the run go from queued/working to finished without reloading, then open the run page
// and see the file the agent wrote in the workspace listing, and the result it submitted. The
// launcher's worker claims the run and runs Builder's real command in a local sandbox; copyback
// brings notes/builder.log into the host workspace.
import { expect, test } from "@playwright/test";

const ACME = "0a0e0000-0000-4000-8000-00000000ac01";
// "Move CI to the new runners": a backlog task nobody is assigned to, and that no other test of
// the local project changes (ACME-5's status is changed by console.e2e.ts).
const TASK = "ACME-6";
const RESULT_SUMMARY = "Builder appended a line to notes/builder.log.";

test("assign Builder, wake it, watch it finish, and see its file on the run page", async ({ page }) => {
  // The worker's first claim, the sandbox and the copyback take a few seconds on a loaded machine.
  test.setTimeout(120_000);

  await page.goto(`/companies/${ACME}/issues`);
  await page.getByTestId("issue-row").filter({ hasText: TASK }).getByRole("link").click();
  await expect(page).toHaveURL(/\/issues\/[0-9a-f-]{36}$/);
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-state", "live");
  // A reload would start a new document and lose this: the run's progress must arrive live.
  await page.evaluate(() => {
    (window as unknown as { liveMarker: string }).liveMarker = "same document";
  });

  const panel = page.getByTestId("agent-panel");
  await expect(panel.getByText("No run yet.")).toBeVisible();
  const wake = panel.getByRole("button", { name: "Wake agent" });
  // Unassigned: the button says why it cannot wake anyone yet.
  await expect(wake).toBeDisabled();
  await expect(panel.getByTestId("wake-reason")).toHaveText("Assign an agent first.");

  await panel.getByLabel("Assigned agent").selectOption({ label: "Builder" });
  await expect(panel).toContainText("Assigned to Builder.");
  await expect(page.getByTestId("issue-assignee")).toHaveText("Builder");
  await expect(wake).toBeEnabled();

  // Every text the run chip shows, recorded in the page: the run may pass through "Working"
  // faster than an assertion could poll, but the page must have shown it before "Finished".
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { chipHistory: string[] }).chipHistory = seen;
    const record = () => {
      const text = document.querySelector('[data-testid="agent-run-chip"]')?.textContent ?? null;
      if (text !== null && seen.at(-1) !== text) seen.push(text);
    };
    new MutationObserver(record).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  await wake.click();
  const chip = panel.getByTestId("agent-run-chip");
  await expect(chip).toHaveText("Finished", { timeout: 60_000 });
  const history = await page.evaluate(() => (window as unknown as { chipHistory: string[] }).chipHistory);
  expect(history.at(-1)).toBe("Finished");
  expect(history.slice(0, -1).some((text) => text === "Queued" || text === "Working"), history.join(" -> ")).toBe(true);
  await expect(panel.getByTestId("agent-result-summary")).toHaveText(RESULT_SUMMARY);
  await expect(panel.getByTestId("agent-result-outcome")).toHaveText("In review");
  // The arbiter applied the result's outcome to the task.
  await expect(page.getByTestId("issue-header").getByTestId("issue-status")).toHaveText("In review");
  expect(await page.evaluate(() => (window as unknown as { liveMarker?: string }).liveMarker)).toBe("same document");

  await panel.getByTestId("agent-run-link").click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Run by Builder");
  await expect(page.getByTestId("run-status")).toHaveText("Succeeded");

  // Phases: every step reached.
  const steps = page.getByTestId("run-timeline-step");
  await expect(steps.last()).toContainText("Task updated");
  for (const state of await steps.evaluateAll((els) => els.map((el) => el.getAttribute("data-state"))))
    expect(state).toBe("done");

  // The file the agent wrote, in the workspace listing and among this run's writes.
  const workspace = page.getByTestId("run-workspace");
  await expect(workspace.getByTestId("workspace-entry").filter({ hasText: "notes/builder.log" })).toBeVisible();
  // This run's copyback wrote it (the finalize operation's count: the file and its directory).
  await expect(workspace.getByTestId("run-written-count")).toHaveText(/^[1-9]\d*$/);

  // The controller's run log, newest last: the committed result, without the agent's own lines.
  const log = page.getByTestId("run-events");
  await expect(log).toContainText("result.accepted");
  // The agent's own output, apart, with a download of the whole of it.
  const output = page.getByTestId("agent-output");
  await expect(output).toContainText("Builder: writing notes/builder.log");
  await expect(log).not.toContainText("Builder: writing notes/builder.log");
  const download = await page.request.get((await page.getByTestId("agent-output-download").getAttribute("href"))!);
  expect(download.status()).toBe(200);
  expect(await download.text()).toContain("Builder: writing notes/builder.log\n");

  // The local board holds runtime:manage: the lease and the finalize operation are shown.
  const details = page.getByTestId("finalization-details");
  await expect(details.getByTestId("finalization-coordinator")).toContainText("Committed");
  await expect(details.getByTestId("run-lease")).toContainText("builtin.local");
  await expect(details.getByTestId("workspace-operations")).toContainText(/\d+ written/);

  // And the result summary back on the task.
  await page.getByTestId("run-issue-link").click();
  await expect(page.getByTestId("agent-result-summary")).toHaveText(RESULT_SUMMARY);
});
