import { describe, expect, it } from "vitest";
import { decideLeftoverStaging, parseAttemptDirName } from "./leftover-staging";

const RUN = "0f8fad5b-d9cb-469f-a165-70867728950e";

describe("leftover finalization staging", () => {
  it("reads finalizeRun's directory names and nothing else", () => {
    expect(parseAttemptDirName(`${RUN}-1`)).toEqual({ runId: RUN, attempt: 1 });
    expect(parseAttemptDirName(`${RUN}-12`)).toEqual({ runId: RUN, attempt: 12 });
    for (const other of [`${RUN}-legacy`, `${RUN}-0`, `${RUN}-01`, `${RUN}`, "merge", `tar-dst-1`, `${RUN.toUpperCase()}-1`, `${RUN}-1/..`, `x${RUN}-1`, `${RUN}-1 `]) {
      expect(parseAttemptDirName(other), other).toBeNull();
    }
  });

  it("a settled run's attempt directories go; an in-flight run's stay, older attempts included", () => {
    expect(decideLeftoverStaging(`${RUN}-1`, { phase: "committed" })).toEqual({ remove: true });
    expect(decideLeftoverStaging(`${RUN}-3`, { phase: "terminal_failure" })).toEqual({ remove: true });
    for (const phase of ["observed", "result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"] as const) {
      expect(decideLeftoverStaging(`${RUN}-1`, { phase })).toEqual({ remove: false, reason: "in_flight" });
    }
  });

  it("without a coordinator, or for a name that is not an attempt's, nothing is removed", () => {
    expect(decideLeftoverStaging(`${RUN}-1`, null)).toEqual({ remove: false, reason: "no_coordinator" });
    expect(decideLeftoverStaging(`${RUN}-legacy`, { phase: "committed" })).toEqual({ remove: false, reason: "not_an_attempt" });
  });
});
