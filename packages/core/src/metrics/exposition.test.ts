import { describe, expect, it } from "vitest";
import { parseExposition, sampleSum } from "./exposition";

describe("parseExposition", () => {
  it("reads samples with and without labels and sums the ones that match", () => {
    const samples = parseExposition(
      [
        "# HELP copyback_runs Runs",
        "# TYPE copyback_runs gauge",
        'copyback_runs{status="succeeded",phase="committed"} 3',
        'copyback_runs{status="failed",phase="none"} 1',
        "copyback_database_up 1",
        'weird{msg="a \\"quoted\\" value"} 2.5',
      ].join("\n"),
    );
    expect(sampleSum(samples, "copyback_runs")).toBe(4);
    expect(sampleSum(samples, "copyback_runs", { status: "succeeded" })).toBe(3);
    expect(sampleSum(samples, "copyback_runs", { status: "queued" })).toBe(0);
    expect(sampleSum(samples, "copyback_database_up")).toBe(1);
    expect(samples.at(-1)).toEqual({ name: "weird", labels: { msg: 'a "quoted" value' }, value: 2.5 });
  });
});
