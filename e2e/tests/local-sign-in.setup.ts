// Local mode: the console trusts the person at it, not every local process.
// Before sign-in the console and its API are anonymous; the launcher's sign-in link (built from the
// console secret it keeps under the instance root) gives this browser the console cookie, which
// the local project's tests then reuse (playwright.config.ts, storageState).
import { expect, test } from "@playwright/test";
import fs from "node:fs";
import path from "node:path";
import { localStorageStatePath } from "../local-board";

const home = process.env.E2E_LOCAL_HOME;

test("a browser without the console cookie is anonymous; the launcher's sign-in link makes it the local board", async ({ page, request, baseURL }) => {
  if (!home) throw new Error("E2E_LOCAL_HOME is set by playwright.config.ts");
  const secretFile = path.join(home, "console-secret");
  expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600);
  const secret = fs.readFileSync(secretFile, "utf8").trim();

  // A local process (here Playwright's own HTTP client) without the cookie: 401 on the API.
  const me = await request.get(`/api/trpc/issues.list?input=${encodeURIComponent(JSON.stringify({ json: { companyId: "0a0e0000-0000-4000-8000-00000000ac01" } }))}`);
  expect(me.status()).toBe(401);
  // A wrong link signs nobody in.
  expect((await request.get("/api/local-sign-in?token=not-the-secret", { maxRedirects: 0 })).status()).toBe(401);

  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in/);
  await expect(page.getByTestId("local-sign-in")).toContainText("npm start");

  await page.goto(`${baseURL}/api/local-sign-in?token=${encodeURIComponent(secret)}`);
  await expect(page).toHaveURL(/\/companies\/[0-9a-f-]{36}\/issues$/);
  await expect(page.getByTestId("identity")).toContainText("Local board");
  const cookies = await page.context().cookies();
  const consoleCookie = cookies.find((c) => c.name === "copyback_console");
  expect(consoleCookie).toMatchObject({ httpOnly: true, sameSite: "Lax" });
  expect(consoleCookie?.value).not.toContain(secret);
  await page.context().storageState({ path: localStorageStatePath(home) });
});
