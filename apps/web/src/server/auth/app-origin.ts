// The console's own origin, against which browsers' Origin headers are compared (CSRF) and on
// which session cookies are issued.
import { env } from "~/env";

/**
 * `publicUrl` (COPYBACK_PUBLIC_URL) when configured; otherwise the origin the request was
 * addressed to (its Host header, https only when a proxy says so). null without a Host header.
 * Trusting Host here is safe for CSRF: a forging page cannot make the victim's browser send the
 * console's Host with the page's own Origin, and a page that rebinds its own name to the
 * console's address gets no cookie of the console's (and, in local mode, no loopback Host).
 */
export function appOrigin(headers: Headers, publicUrl: string | undefined): string | null {
  if (publicUrl) return new URL(publicUrl).origin;
  const host = headers.get("host")?.trim();
  if (!host) return null;
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https" ? "https" : "http";
  try {
    return new URL(`${proto}://${host}`).origin;
  } catch {
    return null;
  }
}

/**
 * The origin state-changing browser requests must come from. Local mode always uses the request's
 * own (loopback, see resolve-principal.ts) origin, so that http://localhost:3100 and
 * http://127.0.0.1:3100 both work; authenticated mode uses COPYBACK_PUBLIC_URL when set.
 */
export function consoleOrigin(headers: Headers): string | null {
  const config = env();
  return appOrigin(headers, config.COPYBACK_DEPLOYMENT_MODE === "local" ? undefined : config.COPYBACK_PUBLIC_URL);
}
