// What the authenticated-mode E2E tests share: the demo company, its users' password, the database
// the authenticated launcher runs on (for staging states a browser cannot produce), a signed-in
// page per demo user, and polling for a condition the product reaches on its own.
import { expect, type Browser, type Page } from "@playwright/test";

export const DEMO_PASSWORD = "copyback-demo";
export const ACME = "0a0e0000-0000-4000-8000-00000000ac01";
/** E2E_AUTH_DATABASE_URL: the tests that stage database state skip (with this reason) without it. */
export const databaseUrl = process.env.E2E_AUTH_DATABASE_URL;

/** Submits the sign-in form (the caller checks what happened). */
export async function signIn(page: Page, email: string, password = DEMO_PASSWORD): Promise<void> {
  await page.goto("/sign-in");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** A fresh browser context signed in as a demo user (every demo user has DEMO_PASSWORD). */
export async function signedInPage(browser: Browser, email: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await signIn(page, email);
  await expect(page.getByTestId("company-name")).toBeVisible();
  return page;
}

/** Polls `probe` every 100 ms until it returns a truthy value, or fails naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
