import { describe, expect, it } from "vitest";
import { ageBucket, runGaugeSamples } from "./database-samples";

describe("database gauge samples", () => {
  it("buckets ages at one hour and one day", () => {
    expect(ageBucket(0)).toBe("lt_1h");
    expect(ageBucket(3599.9)).toBe("lt_1h");
    expect(ageBucket(3600)).toBe("1h_to_24h");
    expect(ageBucket(86_399)).toBe("1h_to_24h");
    expect(ageBucket(86_400)).toBe("ge_24h");
    // a clock skew that makes an age negative or NaN is read as fresh, never as old
    expect(ageBucket(-5)).toBe("lt_1h");
    expect(ageBucket(Number.NaN)).toBe("lt_1h");
  });

  it("turns grouped run rows into samples, bigint counts included", () => {
    expect(runGaugeSamples([{ status: "succeeded", phase: "committed", count: 3n }, { status: "queued", phase: "none", count: 1 }])).toEqual([
      { labels: { status: "succeeded", phase: "committed" }, value: 3 },
      { labels: { status: "queued", phase: "none" }, value: 1 },
    ]);
  });
});
