// The readiness probe of the worker and the console.
import { describe, expect, it } from "vitest";
import { probeQuery } from "./probe-query";

describe("readiness probe", () => {
  it("a probe that answers is reachable, with its latency", async () => {
    expect(await probeQuery(async () => 1, 1_000)).toMatchObject({ reachable: true, latencyMs: expect.any(Number) });
  });

  it("a probe that fails or hangs is unreachable, with the reason", async () => {
    expect(await probeQuery(() => Promise.reject(new Error("first\nCan't reach database server at 127.0.0.1:1\n")), 1_000)).toEqual({
      reachable: false,
      error: "Can't reach database server at 127.0.0.1:1",
    });
    expect(await probeQuery(() => new Promise(() => undefined), 50)).toEqual({ reachable: false, error: "no answer within 50 ms" });
  });
});
