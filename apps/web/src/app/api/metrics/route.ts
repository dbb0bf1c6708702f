import { serveMetrics } from "~/server/metrics/metrics-endpoint";

export const dynamic = "force-dynamic";

/** Prometheus metrics of this console process (src/server/metrics/metrics-endpoint.ts). */
export function GET(req: Request) {
  return serveMetrics(req);
}
