// Local mode's console secret: the launcher's secret file and printed link
// (scripts/launch/console-secret.ts), the sign-in link's exchange for the console cookie
// (GET /api/local-sign-in), and principal resolution: only the cookie on a loopback Host is the
// local board; a local process without it (or with another instance's cookie) is anonymous.
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LOCAL_CONSOLE_COOKIE, consoleCookieValue, constantTimeEquals, cookieValues, hasConsoleCookie, isConsoleSecret, localSignInUrl } from "~/server/auth/local-console";
import { handleLocalSignIn } from "~/server/auth/local-sign-in";
import { resolvePrincipal } from "~/server/auth/resolve-principal";
import { ensureConsoleSecret, localConsoleAccess } from "../../../scripts/launch/console-secret";

const SECRET = "s3cret-of-this-instance-0123456789abcdefghijklmnop";
const cookieOf = (secret: string) => `${LOCAL_CONSOLE_COOKIE}=${consoleCookieValue(secret)}`;

const homes: string[] = [];
afterEach(async () => {
  await Promise.all(homes.splice(0).map((home) => fs.rm(home, { recursive: true, force: true })));
});
async function home(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "copyback-console-secret-"));
  homes.push(dir);
  return path.join(dir, "instance");
}

function configure(mode: "local" | "authenticated", secret: string | null = SECRET): void {
  // A URL only: none of these paths reaches the database.
  process.env.DATABASE_URL = "postgresql://nobody@127.0.0.1:1/none";
  process.env.COPYBACK_DEPLOYMENT_MODE = mode;
  process.env.COPYBACK_AUTH_SECRET = "auth-secret-0123456789abcdefghijklmnopqrstuvwxyz";
  if (secret === null) delete process.env.COPYBACK_CONSOLE_SECRET;
  else process.env.COPYBACK_CONSOLE_SECRET = secret;
}

describe("the launcher's console secret", () => {
  it("is created once under the instance root, 0600, and reused by the next start", async () => {
    const instance = await home();
    const first = await ensureConsoleSecret(instance);
    expect(first.file).toBe(path.join(instance, "console-secret"));
    expect((await fs.stat(first.file)).mode & 0o777).toBe(0o600);
    expect(first.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await ensureConsoleSecret(instance)).secret).toBe(first.secret);
  });

  it("refuses a file others can read, or one without a usable secret, with the fix in the message (and changes nothing)", async () => {
    const instance = await home();
    const { file } = await ensureConsoleSecret(instance);
    await fs.chmod(file, 0o644);
    await expect(ensureConsoleSecret(instance)).rejects.toThrow(/readable by other users.*chmod 600/);
    await fs.writeFile(file, "short\n", { mode: 0o600 });
    await fs.chmod(file, 0o600);
    await expect(ensureConsoleSecret(instance)).rejects.toThrow(/does not hold a usable secret.*delete it/);
    expect(await fs.readFile(file, "utf8")).toBe("short\n");
  });

  it("gives the web process the secret and prints exactly one sign-in link that carries it", async () => {
    const instance = await home();
    const access = await localConsoleAccess(instance, "http://127.0.0.1:3100");
    const { secret } = await ensureConsoleSecret(instance);
    expect(access.webEnv).toEqual({ COPYBACK_CONSOLE_SECRET: secret });
    expect(access.signInLine).toContain(`http://127.0.0.1:3100/api/local-sign-in?token=${secret}`);
    expect(access.signInLine.split(secret).length - 1).toBe(1);
  });
});

describe("constant-time comparisons", () => {
  it("compare digests: equal strings match, any other string (shorter, longer, empty) does not", () => {
    expect(constantTimeEquals(SECRET, SECRET)).toBe(true);
    for (const other of ["", SECRET.slice(0, -1), `${SECRET}x`, SECRET.toUpperCase()]) expect(constantTimeEquals(other, SECRET)).toBe(false);
    expect(isConsoleSecret(SECRET, undefined)).toBe(false);
    expect(isConsoleSecret("", SECRET)).toBe(false);
    expect(isConsoleSecret(null, SECRET)).toBe(false);
  });

  it("reads every value of the cookie; the cookie is not the secret and changes with it", () => {
    expect(cookieValues("a=1; copyback_console=x; copyback_console=y", LOCAL_CONSOLE_COOKIE)).toEqual(["x", "y"]);
    expect(consoleCookieValue(SECRET)).not.toContain(SECRET);
    expect(consoleCookieValue(`${SECRET}2`)).not.toBe(consoleCookieValue(SECRET));
    expect(hasConsoleCookie(new Headers({ cookie: `${LOCAL_CONSOLE_COOKIE}=wrong; ${cookieOf(SECRET)}` }), SECRET)).toBe(true);
    expect(hasConsoleCookie(new Headers({ cookie: `${LOCAL_CONSOLE_COOKIE}=${SECRET}` }), SECRET)).toBe(false);
  });
});

describe("GET /api/local-sign-in", () => {
  beforeEach(() => configure("local"));
  const signIn = (token: string, host = "127.0.0.1:3100") =>
    handleLocalSignIn(new Request(`http://${host}/api/local-sign-in?token=${encodeURIComponent(token)}`, { headers: { host } }));

  it("exchanges the right token for an httpOnly, SameSite=Lax console cookie and sends the browser to the console, uncached and without a Referer", async () => {
    const response = signIn(SECRET);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    const cookie = response.headers.getSetCookie();
    expect(cookie).toHaveLength(1);
    expect(cookie[0]).toMatch(/^copyback_console=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    expect(cookie[0]).not.toContain(SECRET);
    const principal = await resolvePrincipal(new Headers({ host: "127.0.0.1:3100", cookie: (cookie[0] as string).split(";")[0] as string }));
    expect(principal).toEqual({ kind: "local_board" });
  });

  it("refuses a wrong, empty or another instance's token with 401 invalid_sign_in_link and sets no cookie", async () => {
    for (const token of ["", "nope", `${SECRET}x`, SECRET.slice(1)]) {
      const response = signIn(token);
      expect(response.status).toBe(401);
      expect(response.headers.getSetCookie()).toEqual([]);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe("invalid_sign_in_link");
      expect(body.message).not.toContain(SECRET);
    }
  });

  it("refuses the right token on a rebinding page's Host (403) without a cookie", () => {
    const response = signIn(SECRET, "rebound.example:3100");
    expect(response.status).toBe(403);
    expect(response.headers.getSetCookie()).toEqual([]);
  });

  it("does not exist in authenticated mode (404 sign_in_disabled)", async () => {
    configure("authenticated");
    const response = signIn(SECRET);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: "sign_in_disabled" });
  });
});

describe("who a local-mode request is", () => {
  beforeEach(() => configure("local"));

  it.each([
    ["a loopback request without a cookie (a local process, an agent with network)", { host: "127.0.0.1:3100" }],
    ["a request without Host or cookie (a local tool)", {}],
    ["another instance's console cookie", { host: "127.0.0.1:3100", cookie: cookieOf(`${SECRET}-other`) }],
    ["the secret itself sent as the cookie", { host: "127.0.0.1:3100", cookie: `${LOCAL_CONSOLE_COOKIE}=${SECRET}` }],
    ["the right cookie on a rebinding page's Host", { host: "rebound.example:3100", cookie: cookieOf(SECRET) }],
  ])("is anonymous: %s", async (_name, headers: Record<string, string>) => {
    expect(await resolvePrincipal(new Headers(headers))).toEqual({ kind: "anonymous" });
  });

  it("is the local board with the console cookie on a loopback Host (127.0.0.1, localhost, ::1)", async () => {
    for (const host of ["127.0.0.1:3100", "localhost:3100", "[::1]:3100"]) {
      expect(await resolvePrincipal(new Headers({ host, cookie: cookieOf(SECRET) }))).toEqual({ kind: "local_board" });
    }
  });

  it("refuses to start the web app in local mode without a console secret (a clear error naming the variable)", async () => {
    configure("local", null);
    await expect(resolvePrincipal(new Headers({ host: "127.0.0.1:3100" }))).rejects.toThrow(/COPYBACK_CONSOLE_SECRET/);
  });
});

it("builds the sign-in link the launcher prints and the E2E harness opens", () => {
  expect(localSignInUrl("http://127.0.0.1:3100/", "a+b")).toBe("http://127.0.0.1:3100/api/local-sign-in?token=a%2Bb");
});
