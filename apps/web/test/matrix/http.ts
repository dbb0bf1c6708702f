// Requests as each principal sends them: its credential (cookie, bearer key, loopback Host, or the
// constructed-principal header), addressed to the console's origin in the file's deployment mode,
// and for state changes with ambient credentials the same-origin headers a browser adds.
import { PUBLIC_URL } from "../auth-fixture";
import { constructedPrincipalHeaders } from "./constructed-principal";
import type { DeploymentMode } from "./expectations";
import { isAmbient, type Credential } from "./principals";

/** Local mode: the console as the launcher serves it, on loopback. */
export const LOOPBACK_ORIGIN = "http://127.0.0.1:3100";
/** Local mode: a hostile page whose own name was rebound to 127.0.0.1 (DNS rebinding). */
export const REBINDING_ORIGIN = "http://rebound.example:3100";

export function originFor(mode: DeploymentMode, credential: Credential): string {
  if (mode === "authenticated") return PUBLIC_URL;
  return credential.kind === "rebinding_host" ? REBINDING_ORIGIN : LOOPBACK_ORIGIN;
}

export function credentialHeaders(credential: Credential): Record<string, string> {
  switch (credential.kind) {
    case "session":
      return { cookie: credential.cookie };
    case "bearer":
      return { authorization: `Bearer ${credential.secret}` };
    case "constructed":
      return constructedPrincipalHeaders(credential.principal);
    case "loopback":
    case "rebinding_host":
      return credential.cookie ? { cookie: credential.cookie } : {};
    case "none":
      return {};
  }
}

export interface MatrixRequest {
  method: "GET" | "POST";
  /** Path and query, e.g. `/api/runs/<id>` or `/api/events?companyId=<id>`. */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

export function matrixRequest(
  mode: DeploymentMode,
  credential: Credential,
  req: MatrixRequest,
): Request {
  const origin = originFor(mode, credential);
  const hasBody = req.body !== undefined;
  const headers: Record<string, string> = {
    host: new URL(origin).host,
    ...credentialHeaders(credential),
    ...(req.method !== "GET" && isAmbient(credential)
      ? { origin, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" }
      : {}),
    ...(hasBody ? { "content-type": "application/json" } : {}),
    ...req.headers,
  };
  return new Request(`${origin}${req.path}`, {
    method: req.method,
    headers,
    ...(hasBody ? { body: JSON.stringify(req.body) } : {}),
    ...(req.signal ? { signal: req.signal } : {}),
  });
}
