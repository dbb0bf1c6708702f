// The console in authenticated mode, as a board member uses it: sign in (a wrong password is
// refused), switch company, open an issue, and see another member's change arrive live.
import { expect, test, type Browser, type Page } from "@playwright/test";

const DEMO_PASSWORD = "copyback-demo";
const ACME = "0a0e0000-0000-4000-8000-00000000ac01";

async function signIn(page: Page, email: string, password = DEMO_PASSWORD) {
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

async function signedInPage(browser: Browser, email: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await signIn(page, email);
  await expect(page.getByTestId("company-name")).toBeVisible();
  return page;
}

test("an anonymous visitor is sent to sign in, and a wrong password is refused", async ({ page }) => {
  await page.goto(`/companies/${ACME}/issues`);
  await expect(page).toHaveURL(/\/sign-in/);
  await signIn(page, "ada@acme.test", "not-the-password");
  await expect(page.getByTestId("sign-in-error")).not.toBeEmpty();
  await expect(page).toHaveURL(/\/sign-in/);
});

test("sign in, switch company, open an issue and see a change pushed live", async ({ browser }) => {
  const ada = await signedInPage(browser, "ada@acme.test");
  await expect(ada.getByTestId("identity")).toContainText("Ada");
  await expect(ada.getByTestId("company-name")).toHaveText("Acme Robotics");

  // Ada also belongs to Globex: the switcher takes her there.
  await ada.getByTestId("company-name").click();
  await ada.getByRole("navigation", { name: "Companies" }).getByRole("link", { name: "Globex" }).click();
  await expect(ada.getByTestId("company-name")).toHaveText("Globex");

  // Back in Acme, open a task.
  await ada.goto(`/companies/${ACME}/issues`);
  await ada.getByTestId("issue-row").filter({ hasText: "ACME-5" }).getByRole("link").click();
  await expect(ada).toHaveURL(/\/issues\/[0-9a-f-]{36}$/);
  const issueUrl = ada.url();

  // Grace (an admin, signed in elsewhere) posts on the same task; Ada's open page shows it
  // without a reload, through the server push channel.
  const grace = await signedInPage(browser, "grace@acme.test");
  await grace.goto(issueUrl);
  const text = `Pushed live to Ada (${Date.now()})`;
  await grace.getByLabel("Add a message").fill(text);
  await grace.getByRole("button", { name: "Post message" }).click();
  await expect(grace.getByTestId("message").filter({ hasText: text })).toBeVisible();

  await expect(ada.getByTestId("message").filter({ hasText: text })).toBeVisible({ timeout: 10_000 });
});
