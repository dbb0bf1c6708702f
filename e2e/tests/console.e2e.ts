import { expect, test } from "@playwright/test";

test("the console opens on the demo company and lists its issues from the database", async ({ page }) => {
  await page.goto("/");
  await expect(page.getByTestId("company-name")).toHaveText("Acme Robotics");
  const rows = page.getByTestId("issue-row");
  await expect(rows.first()).toBeVisible();
  expect(await rows.count()).toBeGreaterThanOrEqual(5);
  // The client-side tRPC query reaches the database through the API.
  await expect(page.getByTestId("health-badge")).toContainText("database ok");
});

test("the health endpoint reports a reachable database", async ({ request }) => {
  const response = await request.get("/api/health");
  expect(response.ok()).toBe(true);
  const body = await response.json();
  expect(body.status).toBe("ok");
  expect(body.database.reachable).toBe(true);
});
