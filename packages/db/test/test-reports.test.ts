// The test runner's summary (scripts/tests/reports.ts; scripts have no vitest
// project) counts a test that skipped itself as skipped, never as passed, and keeps its reason.
import { describe, expect, it } from "vitest";
import { countVitest, skippedVitest } from "../../../scripts/tests/reports";

// The shape vitest 4's json reporter writes (checked against a real report).
const report = {
  numPassedTests: 1,
  numFailedTests: 0,
  numPendingTests: 2,
  numTodoTests: 0,
  testResults: [
    {
      assertionResults: [
        { fullName: "spec R-ATT-5: the fixture is the spec's block", status: "skipped", meta: { skipReason: "no ../shared beside this clone" } },
        { fullName: "root only", status: "skipped", meta: {} },
        { fullName: "runs", status: "passed", meta: {} },
      ],
    },
  ],
};

describe("skipped tests in the summary", () => {
  it("a self-skipped test is counted as skipped, with the reason it gave", () => {
    expect(countVitest(report)).toEqual({ passed: 1, failed: 0, skipped: 2, files: 1 });
    expect(skippedVitest(report)).toEqual([
      { name: "spec R-ATT-5: the fixture is the spec's block", reason: "no ../shared beside this clone" },
      { name: "root only", reason: null },
    ]);
  });

  it("a missing or foreign report has no skipped tests", () => {
    expect(skippedVitest(null)).toEqual([]);
    expect(skippedVitest({})).toEqual([]);
    expect(skippedVitest({ testResults: [{}] })).toEqual([]);
  });
});
