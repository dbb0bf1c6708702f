// Liveness and readiness are separate answers; readiness needs the database.
import { describe, expect, it } from "vitest";
import { judgeReadiness } from "../src/liveness";

describe("worker readiness", () => {
  it("ready only when live and the database answered", () => {
    const up = { reachable: true as const, latencyMs: 1 };
    const down = { reachable: false as const, error: "Can't reach database server" };
    expect(judgeReadiness("ok", up)).toBe("ready");
    expect(judgeReadiness("ok", down)).toBe("not_ready");
    expect(judgeReadiness("stale", up)).toBe("not_ready");
    expect(judgeReadiness("stopping", up)).toBe("not_ready");
  });
});
