// The board console in local mode, as a board member uses it: the board, its filters, a task,
// its conversation and status, a run's inspection page, the company switcher and members.
import { expect, test, type Page } from "@playwright/test";

const ACME = "0a0e0000-0000-4000-8000-00000000ac01";

async function openIssue(page: Page, identifier: string) {
  await page.goto(`/companies/${ACME}/issues`);
  const row = page.getByTestId("issue-row").filter({ hasText: identifier });
  await row.getByRole("link").click();
  await expect(page).toHaveURL(/\/issues\/[0-9a-f-]{36}$/);
  await expect(page.getByText(identifier, { exact: true }).first()).toBeVisible();
}

test("/ opens the first company's issues board with the local board identity", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(new RegExp(`/companies/${ACME}/issues$`));
  await expect(page.getByTestId("company-name")).toHaveText("Acme Robotics");
  await expect(page.getByTestId("identity")).toContainText("Local board");
  const rows = page.getByTestId("issue-row");
  await expect(rows.first()).toBeVisible();
  expect(await rows.count()).toBeGreaterThanOrEqual(7);
  await expect(
    page
      .getByRole("navigation", { name: "Company sections" })
      .getByRole("link", { name: "Issues" }),
  ).toHaveAttribute("aria-current", "page");
  // The client-side tRPC query reaches the database through the API.
  await expect(page.getByTestId("health-badge")).toContainText("database ok");
});

test("filters the board by status on the server, through the URL", async ({ page }) => {
  await page.goto(`/companies/${ACME}/issues`);
  await page.getByLabel("Status").selectOption("done");
  await expect(page).toHaveURL(/status=done/);
  const rows = page.getByTestId("issue-row");
  await expect(rows.filter({ hasText: "ACME-1" })).toBeVisible();
  for (const status of await rows.getByTestId("issue-status").allTextContents())
    expect(status).toBe("Done");
  await expect(rows.filter({ hasText: "ACME-2" })).toHaveCount(0);

  await page.getByLabel("Assignee").selectOption({ label: "Unassigned" });
  await expect(page).toHaveURL(/assignee=unassigned/);
  await expect(page.getByText("No issues match these filters")).toBeVisible();
  await page.getByRole("link", { name: "Clear filters" }).click();
  await expect(page.getByTestId("issue-row").filter({ hasText: "ACME-2" })).toBeVisible();
});

test("opens an issue, posts a message and changes its status", async ({ page }) => {
  await openIssue(page, "ACME-5");
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  await expect(page.getByTestId("conversation")).toContainText(
    "Put it in docs/motor-controller.md.",
  );

  const text = `Please also cover the error codes (${Date.now()})`;
  await page.getByLabel("Add a message").fill(text);
  await page.getByRole("button", { name: "Post message" }).click();
  const posted = page.getByTestId("message").filter({ hasText: text });
  await expect(posted).toBeVisible();
  await expect(posted).toContainText("Local board");
  await expect(page.getByLabel("Add a message")).toHaveValue("");

  await page.getByTestId("status-select").selectOption("in_review");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("issue-header").getByTestId("issue-status")).toHaveText(
    "In review",
  );

  // Both survive a reload: they were written, not just shown.
  await page.reload();
  await expect(page.getByTestId("message").filter({ hasText: text })).toBeVisible();
  await expect(page.getByTestId("status-select")).toHaveValue("in_review");
});

test("opens a run's inspection page from its issue", async ({ page }) => {
  await openIssue(page, "ACME-1");
  const runs = page.getByTestId("run-row");
  await expect(runs.first()).toBeVisible();
  await runs
    .first()
    .getByRole("link", { name: /Inspect run/ })
    .click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  await expect(page.getByRole("heading", { level: 1 })).toHaveText("Run by Builder");
  await expect(page.getByTestId("run-status")).toHaveText("Succeeded");
  await expect(page.getByTestId("runtime-mode")).toHaveText("native");
  await expect(page.getByTestId("run-events")).toContainText("copyback.committed");
  // The local board holds runtime:manage, so the operator section is there.
  const details = page.getByTestId("finalization-details");
  await expect(details).toBeVisible();
  await expect(details.getByTestId("finalization-coordinator")).toContainText("Committed");
  await expect(details).toContainText("Finalize (copyback)");

  await page.getByTestId("run-issue-link").click();
  await expect(page.getByText("ACME-1", { exact: true }).first()).toBeVisible();
});

test("switches company with the switcher, and another company's issue is not found", async ({
  page,
}) => {
  await page.goto(`/companies/${ACME}/issues`);
  await page.getByTestId("company-name").click();
  await page
    .getByRole("navigation", { name: "Companies" })
    .getByRole("link", { name: "Globex" })
    .click();
  await expect(page.getByTestId("company-name")).toHaveText("Globex");
  const row = page.getByTestId("issue-row").filter({ hasText: "GLX-1" });
  await expect(row).toBeVisible();
  const globexIssueUrl = await row.getByRole("link").getAttribute("href");
  const globexIssueId = globexIssueUrl?.split("/").pop();
  expect(globexIssueId).toMatch(/^[0-9a-f-]{36}$/);

  // Globex's issue id under Acme's company id reads as missing.
  const response = await page.goto(`/companies/${ACME}/issues/${globexIssueId}`);
  expect(response?.status()).toBe(404);
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
});

test("shows the activity log and the members with their controls", async ({ page }) => {
  await page.goto(`/companies/${ACME}/activity`);
  await expect(page.getByTestId("activity-row").first()).toBeVisible();
  await page.goto(`/companies/${ACME}/members`);
  const ada = page.getByTestId("member-row").filter({ hasText: "ada@acme.test" });
  await expect(ada).toContainText("Owner");
  await expect(ada.getByRole("button", { name: /Suspend/ })).toBeVisible();
});

test("the health endpoint reports a reachable database", async ({ request }) => {
  const response = await request.get("/api/health");
  expect(response.ok()).toBe(true);
  const body = await response.json();
  expect(body.status).toBe("ok");
  expect(body.database.reachable).toBe(true);
});
