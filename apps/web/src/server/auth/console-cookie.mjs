// The local console cookie's name and value (local-console.ts has the why). Plain JavaScript so
// that the console's server in front of Next.js (scripts/render-cache.mjs, run by node without a
// TypeScript loader) recognises exactly the cookie the app sets.
import { createHmac } from "node:crypto";

export const LOCAL_CONSOLE_COOKIE = "copyback_console";

const COOKIE_CONTEXT = "copyback.local-console-cookie.v1";

/**
 * The cookie value that proves the browser once held the secret.
 * @param {string} secret
 * @returns {string}
 */
export function consoleCookieValue(secret) {
  return createHmac("sha256", secret).update(COOKIE_CONTEXT).digest("base64url");
}
