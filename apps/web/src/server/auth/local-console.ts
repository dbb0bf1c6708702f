// Local mode trusts the person at the console, not every process on the machine.
// The launcher keeps a per-instance secret in `<instance root>/console-secret` (0600;
// bubblewrap sandboxes see an empty tmpfs there) and prints one sign-in link with it; opening the
// link (GET /api/local-sign-in?token=...) exchanges it for an httpOnly, SameSite=Lax cookie. A
// request without that cookie (or a bearer API key) is anonymous, even from 127.0.0.1.
//
// The cookie is not the secret itself but an HMAC of it, so a cookie copied out of a browser does
// not reveal the link, and rotating the secret (delete the file, restart) invalidates every cookie.
// Both comparisons are constant time over fixed-length digests.
import { createHash, timingSafeEqual } from "node:crypto";
import { consoleCookieValue, LOCAL_CONSOLE_COOKIE } from "./console-cookie.mjs";

export { consoleCookieValue, LOCAL_CONSOLE_COOKIE };
export const LOCAL_SIGN_IN_PATH = "/api/local-sign-in";
/** How long a browser stays signed in (the cookie's Max-Age): 30 days. */
export const LOCAL_CONSOLE_COOKIE_MAX_AGE_SECONDS = 30 * 24 * 60 * 60;

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/** Constant-time equality of two strings of any length (compares their sha256 digests). */
export function constantTimeEquals(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** Is `token` (from the sign-in link) this instance's secret? */
export function isConsoleSecret(token: string | null | undefined, secret: string | undefined): boolean {
  if (!secret || typeof token !== "string" || token === "") return false;
  return constantTimeEquals(token, secret);
}

/** The values of one cookie in a Cookie header (a header may carry a name more than once). */
export function cookieValues(cookieHeader: string | null, name: string): string[] {
  if (!cookieHeader) return [];
  const values: string[] = [];
  for (const part of cookieHeader.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) values.push(part.slice(eq + 1).trim());
  }
  return values;
}

/** Does this request carry the console cookie of this instance's current secret? */
export function hasConsoleCookie(headers: Headers, secret: string | undefined): boolean {
  if (!secret) return false;
  const expected = consoleCookieValue(secret);
  // Every value is compared (no early exit on the first match's position).
  let ok = false;
  for (const value of cookieValues(headers.get("cookie"), LOCAL_CONSOLE_COOKIE)) ok = constantTimeEquals(value, expected) || ok;
  return ok;
}

/** The Set-Cookie line that signs a browser in. Secure is left off: local mode is plain http on loopback. */
export function consoleSetCookie(secret: string): string {
  return `${LOCAL_CONSOLE_COOKIE}=${consoleCookieValue(secret)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${LOCAL_CONSOLE_COOKIE_MAX_AGE_SECONDS}`;
}

/** The sign-in link the launcher prints (and the E2E harness builds from the secret file). */
export function localSignInUrl(consoleUrl: string, secret: string): string {
  return `${consoleUrl.replace(/\/$/, "")}${LOCAL_SIGN_IN_PATH}?token=${encodeURIComponent(secret)}`;
}
