// The console in authenticated mode, as a board member uses it: sign in (a wrong password is
// refused), switch company, open an issue, and see another member's change arrive live.
import { expect, test } from "@playwright/test";
import { ACME, signIn, signedInPage } from "./authenticated";

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
