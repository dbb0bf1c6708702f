// The console's probes in the usual livez/readyz shape, beside /api/health (kept
// for existing callers: readiness with the health.get body):
//   GET /api/livez   the web process serves requests (a restart would not help otherwise).
//   GET /api/readyz  it can also reach its database now (a load balancer should not send it
//                    traffic otherwise); 503 with the reason while it cannot.
// Probes carry no credential and need none. A request that does carry a bearer key gets what
// every route answers a refused one (401 invalid_api_key), as /api/health does; checking it is
// the only database access of /api/livez, and a database that cannot answer it does not make
// the process less live.
import { isDomainError } from "@copyback/core/errors";
import type { ReadinessProbe } from "@copyback/db/client";
import { resolvePrincipal } from "~/server/auth/resolve-principal";
import { domainErrorResponse } from "~/server/rest/responses";

/** The refusal of a presented credential, or null (none presented, accepted, or not checkable now). */
export async function refusedCredential(headers: Headers): Promise<Response | null> {
  if (!headers.has("authorization")) return null;
  try {
    await resolvePrincipal(headers);
    return null;
  } catch (error) {
    return isDomainError(error) ? domainErrorResponse(error) : null;
  }
}

/** Pure: the readiness answer (HTTP status and body) of one probe. */
export function readinessResponse(database: ReadinessProbe, now: Date): { status: 200 | 503; body: object } {
  return database.reachable
    ? { status: 200, body: { status: "ready", database, time: now.toISOString() } }
    : { status: 503, body: { status: "not_ready", code: "database_unreachable", database, time: now.toISOString() } };
}

/** Pure: the liveness answer; the process answering is the whole check. */
export function livenessResponse(uptimeSeconds: number, now: Date): { status: 200; body: object } {
  return { status: 200, body: { status: "ok", pid: process.pid, uptimeSeconds: Math.round(uptimeSeconds), time: now.toISOString() } };
}
