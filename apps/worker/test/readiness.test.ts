// Issue 13 §1: liveness and readiness are separate answers; readiness needs the database.
import { describe, expect, it } from "vitest";
import { judgeReadiness, probeDatabase } from "../src/liveness";

describe("issue 13: worker readiness", () => {
  it("issue 13: ready only when live and the database answered", () => {
    const up = { reachable: true as const, latencyMs: 1 };
    const down = { reachable: false as const, error: "Can't reach database server" };
    expect(judgeReadiness("ok", up)).toBe("ready");
    expect(judgeReadiness("ok", down)).toBe("not_ready");
    expect(judgeReadiness("stale", up)).toBe("not_ready");
    expect(judgeReadiness("stopping", up)).toBe("not_ready");
  });

  it("issue 13: a probe that fails or hangs is unreachable, with the reason", async () => {
    expect(await probeDatabase(async () => 1, 1_000)).toMatchObject({ reachable: true });
    expect(await probeDatabase(() => Promise.reject(new Error("first\nCan't reach database server at 127.0.0.1:1")), 1_000)).toEqual({
      reachable: false,
      error: "Can't reach database server at 127.0.0.1:1",
    });
    expect(await probeDatabase(() => new Promise(() => undefined), 50)).toEqual({ reachable: false, error: "no answer within 50 ms" });
  });
});
