// A tiny loopback HTTP endpoint for the launcher, CI and process supervisors, in the usual shape:
//   GET /livez   liveness: the loop is running and a pass finished recently (restart me if not).
//                A pass that fails (the database is down) still finishes, so a worker waiting for
//                its database stays live: restarting it would not help.
//   GET /readyz  readiness: live, and the database answers a probe now (do not count on me if not).
//   GET /healthz the liveness report, as before (kept for existing callers); `/` likewise.
// 200 when the answer is yes, 503 otherwise; the body says why.
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { ReadinessProbe } from "@copyback/db";
import type { LoopStatus } from "./loop";

export interface LivenessReport {
  status: "ok" | "stale" | "stopping";
  loop: LoopStatus;
  pid: number;
  uptimeSeconds: number;
}

export type DatabaseProbe = ReadinessProbe;

export interface ReadinessReport extends Omit<LivenessReport, "status"> {
  status: "ready" | "not_ready";
  live: LivenessReport["status"];
  database: DatabaseProbe;
}

export function judgeLiveness(loop: LoopStatus, now: Date, staleAfterMs: number): LivenessReport["status"] {
  if (loop.state === "stopping" || loop.state === "stopped") return "stopping";
  const last = loop.lastPassFinishedAt ?? loop.lastPassStartedAt;
  if (!last) return "ok";
  return now.getTime() - last.getTime() > staleAfterMs ? "stale" : "ok";
}

/** Pure: ready exactly when live and the database answered. */
export function judgeReadiness(live: LivenessReport["status"], database: DatabaseProbe): ReadinessReport["status"] {
  return live === "ok" && database.reachable ? "ready" : "not_ready";
}

export async function serveLiveness(opts: {
  host: string;
  port: number;
  loop: () => LoopStatus;
  staleAfterMs: number;
  /** The readiness probe of the database (e.g. SELECT 1 with a deadline). */
  database: () => Promise<DatabaseProbe>;
}): Promise<{ url: string; readyUrl: string; close(): Promise<void> }> {
  const liveness = (): LivenessReport => {
    const loop = opts.loop();
    return { status: judgeLiveness(loop, new Date(), opts.staleAfterMs), loop, pid: process.pid, uptimeSeconds: Math.round(process.uptime()) };
  };
  const send = (res: http.ServerResponse, ok: boolean, body: unknown) =>
    res.writeHead(ok ? 200 : 503, { "content-type": "application/json" }).end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    const route = req.url?.split("?")[0];
    if (req.method === "GET" && (route === "/livez" || route === "/healthz" || route === "/")) {
      const report = liveness();
      send(res, report.status === "ok", report);
      return;
    }
    if (req.method === "GET" && route === "/readyz") {
      const { status: live, ...rest } = liveness();
      void opts.database().then((database) => {
        const report: ReadinessReport = { ...rest, status: judgeReadiness(live, database), live, database };
        send(res, report.status === "ready", report);
      });
      return;
    }
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ code: "not_found" }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const base = `http://${opts.host}:${address.port}`;
  return {
    url: `${base}/healthz`,
    readyUrl: `${base}/readyz`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
