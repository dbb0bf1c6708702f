// A tiny loopback HTTP endpoint that reports the loop's liveness (GET /healthz) for the launcher,
// CI and process supervisors. Live = the loop is running and a pass finished recently.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { LoopStatus } from "./loop";

export interface LivenessReport {
  status: "ok" | "stale" | "stopping";
  loop: LoopStatus;
  pid: number;
  uptimeSeconds: number;
}

export function judgeLiveness(loop: LoopStatus, now: Date, staleAfterMs: number): LivenessReport["status"] {
  if (loop.state === "stopping" || loop.state === "stopped") return "stopping";
  const last = loop.lastPassFinishedAt ?? loop.lastPassStartedAt;
  if (!last) return "ok";
  return now.getTime() - last.getTime() > staleAfterMs ? "stale" : "ok";
}

export async function serveLiveness(opts: {
  host: string;
  port: number;
  loop: () => LoopStatus;
  staleAfterMs: number;
}): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    if (req.method !== "GET" || (req.url !== "/healthz" && req.url !== "/")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ code: "not_found" }));
      return;
    }
    const loop = opts.loop();
    const report: LivenessReport = {
      status: judgeLiveness(loop, new Date(), opts.staleAfterMs),
      loop,
      pid: process.pid,
      uptimeSeconds: Math.round(process.uptime()),
    };
    res.writeHead(report.status === "ok" ? 200 : 503, { "content-type": "application/json" }).end(JSON.stringify(report));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${opts.host}:${address.port}/healthz`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
