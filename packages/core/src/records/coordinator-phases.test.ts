import { describe, expect, it } from "vitest";
import { canTransition, FINALIZATION_PHASES, isFinalPhase, type FinalizationPhase } from "./coordinator-phases";

const allowed: Array<[FinalizationPhase, FinalizationPhase]> = [
  ["observed", "result_accepted"],
  ["observed", "terminal_failure"],
  ["result_accepted", "workspace_finalizing"],
  ["result_accepted", "retryable_failure"],
  ["result_accepted", "terminal_failure"],
  ["workspace_finalizing", "workspace_finalizing"],
  ["workspace_finalizing", "arbitrating"],
  ["workspace_finalizing", "retryable_failure"],
  ["workspace_finalizing", "terminal_failure"],
  ["arbitrating", "committed"],
  ["arbitrating", "retryable_failure"],
  ["arbitrating", "terminal_failure"],
  ["retryable_failure", "workspace_finalizing"],
  ["retryable_failure", "arbitrating"],
  ["retryable_failure", "terminal_failure"],
];

describe("coordinator phase table", () => {
  it("allows exactly the DESIGN.md transitions", () => {
    for (const from of FINALIZATION_PHASES) {
      for (const to of FINALIZATION_PHASES) {
        const expected = allowed.some(([f, t]) => f === from && t === to);
        expect(canTransition(from, to), `${from} -> ${to}`).toBe(expected);
      }
    }
  });

  it("R-ATT-5 committed and terminal_failure are final: a committed coordinator is never overwritten", () => {
    for (const to of FINALIZATION_PHASES) {
      expect(canTransition("committed", to)).toBe(false);
      expect(canTransition("terminal_failure", to)).toBe(false);
    }
    expect(FINALIZATION_PHASES.filter(isFinalPhase)).toEqual(["committed", "terminal_failure"]);
  });

  it("never skips the copyback: no path from result_accepted or observed straight to committed", () => {
    expect(canTransition("observed", "committed")).toBe(false);
    expect(canTransition("result_accepted", "committed")).toBe(false);
    expect(canTransition("result_accepted", "arbitrating")).toBe(false);
    expect(canTransition("workspace_finalizing", "committed")).toBe(false);
  });
});

describe("the readmission edge", () => {
  it("R-EX-3 terminal_failure -> result_accepted only for native_workspace_sync_out_retry_exhausted", async () => {
    const { canReadmit, READMISSION_EDGE } = await import("./coordinator-phases");
    const { EXPORT_RETRY_EXHAUSTED_CODE } = await import("./coordinator-phases");
    expect(READMISSION_EDGE.failureCode).toBe(EXPORT_RETRY_EXHAUSTED_CODE);
    expect(canReadmit("terminal_failure", EXPORT_RETRY_EXHAUSTED_CODE)).toBe(true);
    for (const code of ["workspace_merge_conflict", "native_workspace_sync_out_limit_exceeded", "finalization_commit_failed", null]) {
      expect(canReadmit("terminal_failure", code)).toBe(false);
    }
    for (const phase of FINALIZATION_PHASES.filter((p) => p !== "terminal_failure")) {
      expect(canReadmit(phase, EXPORT_RETRY_EXHAUSTED_CODE)).toBe(false);
    }
    // The ordinary table is unchanged: no ordinary writer can leave terminal_failure.
    expect(canTransition("terminal_failure", "result_accepted")).toBe(false);
  });
});

describe("the historical unsafe replay edge", () => {
  it("R-UA-5 leaves terminal_failure only for the historical unsafe-archive code", async () => {
    const { canReplayHistoricalUnsafe, HISTORICAL_UNSAFE_ARCHIVE_CODE } = await import("./coordinator-phases");
    expect(canReplayHistoricalUnsafe("terminal_failure", HISTORICAL_UNSAFE_ARCHIVE_CODE)).toBe(true);
    for (const code of [null, "unsafe_archive", "native_workspace_sync_out_retry_exhausted", "native_workspace_sync_out_too_many_entries", "workspace_merge_conflict"]) {
      expect(canReplayHistoricalUnsafe("terminal_failure", code), String(code)).toBe(false);
    }
    for (const phase of FINALIZATION_PHASES.filter((p) => p !== "terminal_failure")) {
      expect(canReplayHistoricalUnsafe(phase, HISTORICAL_UNSAFE_ARCHIVE_CODE), phase).toBe(false);
    }
  });
});
