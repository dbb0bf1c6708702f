// Cross-site request forgery guard for state-changing requests (tRPC mutations, REST POSTs).
//
// Only ambient credentials are forgeable: a browser attaches the session cookie to a request a
// hostile page triggers, and in local mode the "credential" is merely reaching 127.0.0.1. A
// bearer API key is never attached by the browser on its own, so bearer requests are exempt.
// SameSite=Lax already keeps the cookie off cross-site POSTs in current browsers; this check does
// not rely on that (older browsers, same-site sibling origins, local mode has no cookie at all).
import { DomainError } from "@copyback/core/errors";
import type { Principal } from "@copyback/core/auth";

/** Does this principal's authority come from something a browser sends by itself? */
export function isAmbientlyAuthenticated(principal: Principal): boolean {
  return principal.kind === "local_board" || (principal.kind === "board_user" && principal.via === "session");
}

/**
 * Is this request (as its headers tell) coming from a page of another origin?
 * - `Sec-Fetch-Site` (sent by every current browser) must be `same-origin` or `none` (typed URL,
 *   bookmark);
 * - an `Origin` header, when present, must be exactly the console's origin (`null` is refused:
 *   sandboxed frames and privacy redirects send it);
 * - a request with neither header did not come from a browser page (curl, scripts), which cannot
 *   be tricked into sending it.
 */
export function isCrossSiteRequest(headers: Headers, expectedOrigin: () => string | null): boolean {
  const site = headers.get("sec-fetch-site")?.trim().toLowerCase();
  if (site && site !== "same-origin" && site !== "none") return true;
  const origin = headers.get("origin")?.trim();
  if (origin === undefined || origin === "") return false;
  if (origin === "null") return true;
  const expected = expectedOrigin();
  return expected === null || origin.toLowerCase() !== expected.toLowerCase();
}

/** The error a refused cross-site mutation gets (403, code `cross_site_request`). */
export function crossSiteError(): DomainError {
  return new DomainError("forbidden", "cross_site_request", "This change must be made from the Copyback console itself; cross-site requests are refused.");
}

/**
 * Throws `cross_site_request` for a cross-site state change made with ambient credentials.
 * `expectedOrigin` is asked only when an Origin header needs comparing (configuration is read lazily).
 */
export function assertSameSiteMutation(principal: Principal, headers: Headers, expectedOrigin: () => string | null): void {
  if (isAmbientlyAuthenticated(principal) && isCrossSiteRequest(headers, expectedOrigin)) throw crossSiteError();
}
