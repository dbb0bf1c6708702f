// The console's liveness and readiness answers (/api/livez, /api/readyz).
import { describe, expect, it } from "vitest";
import { livenessResponse, readinessResponse } from "~/server/health/probes";

const now = new Date("2026-12-01T10:00:00.000Z");

describe("console probes", () => {
  it("ready (200) only while the database answers; 503 with the reason otherwise", () => {
    expect(readinessResponse({ reachable: true, latencyMs: 1.5 }, now)).toEqual({
      status: 200,
      body: { status: "ready", database: { reachable: true, latencyMs: 1.5 }, time: "2026-12-01T10:00:00.000Z" },
    });
    expect(readinessResponse({ reachable: false, error: "Can't reach database server at 127.0.0.1:54329" }, now)).toEqual({
      status: 503,
      body: {
        status: "not_ready",
        code: "database_unreachable",
        database: { reachable: false, error: "Can't reach database server at 127.0.0.1:54329" },
        time: "2026-12-01T10:00:00.000Z",
      },
    });
  });

  it("live (200) whenever the process answers, database or not", () => {
    expect(livenessResponse(12.4, now)).toEqual({ status: 200, body: { status: "ok", pid: process.pid, uptimeSeconds: 12, time: "2026-12-01T10:00:00.000Z" } });
  });
});
