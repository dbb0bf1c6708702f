// The worker's Prometheus endpoint: its own small HTTP listener, separate
// from the probes so a scraper and a supervisor can be given different ports. Off unless
// WORKER_METRICS=on; GET /metrics answers the text exposition of @copyback/core/metrics (this
// process's counters and histograms plus the database gauges computed on scrape). It binds to
// loopback by default: like the probes it has no credentials, so expose it only to the scraper.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { MetricsEndpoint } from "@copyback/core/metrics";

export async function serveMetrics(opts: { host: string; port: number; endpoint: MetricsEndpoint; onError?: (error: unknown) => void }): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const route = req.url?.split("?")[0];
    if (req.method !== "GET" || route !== "/metrics") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ code: "not_found", message: "GET /metrics" }));
      return;
    }
    opts.endpoint.render().then(
      (body) => res.writeHead(200, { "content-type": opts.endpoint.contentType }).end(body),
      (error: unknown) => {
        opts.onError?.(error);
        res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ code: "metrics_failed", message: "The metrics could not be rendered." }));
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${opts.host}:${address.port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
