// The console's Prometheus endpoint: the metric definitions of
// @copyback/core/metrics (this process's counters, the database gauges computed on scrape, and the
// open live-update connections), behind decideMetricsAccess. One endpoint per process, kept on
// globalThis like the database client so dev-mode reloads do not register it twice.
import "server-only";
import { timingSafeEqual } from "node:crypto";
import {
  decideMetricsAccess,
  setLiveConnectionSource,
  createMetricsEndpoint,
  type MetricsEndpoint,
} from "@copyback/core/metrics";
import { isDomainError } from "@copyback/core/errors";
import { env } from "~/env";
import { bearerTokenOf } from "~/server/auth/api-keys";
import { resolvePrincipal } from "~/server/auth/resolve-principal";
import { db } from "~/server/db";
import { liveFeed } from "~/server/live/process-feed";
import { domainErrorResponse, jsonError } from "~/server/rest/responses";

const holder = globalThis as unknown as { copybackMetrics?: MetricsEndpoint };

function endpoint(): MetricsEndpoint {
  if (!holder.copybackMetrics) {
    setLiveConnectionSource(() => liveFeed().subscriberCount());
    holder.copybackMetrics = createMetricsEndpoint({ db: db() });
  }
  return holder.copybackMetrics;
}

/** Constant-time comparison of the presented bearer with COPYBACK_METRICS_TOKEN (unset: never). */
function tokenMatches(presented: string | undefined, configured: string | undefined): boolean {
  if (presented === undefined || configured === undefined) return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(configured);
  return a.length === b.length && timingSafeEqual(a, b);
}

export async function serveMetrics(req: Request): Promise<Response> {
  const bearer = bearerTokenOf(req.headers);
  const tokenMatched = tokenMatches(bearer, env().COPYBACK_METRICS_TOKEN);
  let principal;
  try {
    // The metrics token is not an API key: presented, it is not looked up as one.
    principal = tokenMatched ? ({ kind: "anonymous" } as const) : await resolvePrincipal(req.headers);
  } catch (error) {
    if (isDomainError(error)) return domainErrorResponse(error);
    throw error;
  }
  const access = decideMetricsAccess({ tokenMatched, principal });
  if (access.kind === "deny") {
    return jsonError(access.status, { code: access.code, message: access.message }, access.status === 401 ? { "www-authenticate": "Bearer" } : undefined);
  }
  const metrics = endpoint();
  return new Response(await metrics.render(), { status: 200, headers: { "content-type": metrics.contentType, "cache-control": "no-store" } });
}
