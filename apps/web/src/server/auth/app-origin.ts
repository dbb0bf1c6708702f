// The console's own origin, against which browsers' Origin headers are compared (CSRF) and on
// which session cookies are issued.

/**
 * `publicUrl` (COPYBACK_PUBLIC_URL) when configured; otherwise the origin the request was
 * addressed to (its Host header, https only when a proxy says so). null without a Host header.
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
