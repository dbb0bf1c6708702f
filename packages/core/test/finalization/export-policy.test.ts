import { describe, expect, it } from "vitest";
import { SALVAGE_INFO_MESSAGE } from "../../src/copyback/archive/salvage";
import { ArchiveLimitError } from "../../src/copyback/archive/errors";
import { violation, type ArchiveViolationCode } from "../../src/copyback/archive/violations";
import { decideExport, EXPORT_LIMIT_FAILURE_CODES, exportLimitFailure, exportLimitFailureOf, salvageLogMessage } from "../../src/finalization/export-policy";

const v = (code: ArchiveViolationCode, path = "p") => violation(code, path, "fixed wording");

describe("decideExport", () => {
  it.each([
    [{ stage: "primary", verdict: "safe", violations: [], salvageAvailable: true }, "extract"],
    [{ stage: "salvage", verdict: "safe", violations: [], salvageAvailable: true }, "extract"],
    [{ stage: "primary", verdict: "rejected", violations: [v("symlink_escape")], salvageAvailable: true }, "salvage"],
    [{ stage: "primary", verdict: "rejected", violations: [v("hard_link")], salvageAvailable: false }, "omit"],
    [{ stage: "salvage", verdict: "rejected", violations: [v("absolute_symlink")], salvageAvailable: true }, "omit"],
  ] as const)("R-UA-2/R-UA-3 %o -> %s", (input, kind) => {
    expect(decideExport({ ...input, violations: [...input.violations] })).toEqual({ kind });
  });

  it("R-UA-3: only confinement violations (links, paths outside, devices, framing tricks) reach salvage and omission", () => {
    for (const code of ["absolute_path", "parent_traversal", "through_symlink", "symlink_escape", "absolute_symlink", "symlink_loop", "symlink_target_too_long", "hard_link", "device", "fifo", "unsupported_type", "suspicious_pax_header", "malformed_archive"] as const) {
      expect(decideExport({ stage: "primary", verdict: "rejected", violations: [v(code)], salvageAvailable: true }), code).toEqual({ kind: "salvage" });
      expect(decideExport({ stage: "salvage", verdict: "rejected", violations: [v(code)], salvageAvailable: true }), code).toEqual({ kind: "omit" });
    }
  });

  it("R-RR-1: a truncated stream is a transport failure at either stage, whatever else was seen before it", () => {
    for (const stage of ["primary", "salvage"] as const) {
      expect(decideExport({ stage, verdict: "rejected", violations: [v("truncated_archive", "")], salvageAvailable: true })).toEqual({ kind: "transport_failure" });
      expect(decideExport({ stage, verdict: "rejected", violations: [v("symlink_escape"), v("truncated_archive", "")], salvageAvailable: true })).toEqual({ kind: "transport_failure" });
    }
  });

  it("R-UA-3: limits and collisions are terminal limit failures, never omitted, and never worth a salvage export on their own", () => {
    for (const code of Object.keys(EXPORT_LIMIT_FAILURE_CODES) as ArchiveViolationCode[]) {
      for (const stage of ["primary", "salvage"] as const) {
        for (const salvageAvailable of [true, false]) {
          expect(decideExport({ stage, verdict: "rejected", violations: [v(code)], salvageAvailable }), `${code} ${stage}`).toEqual({ kind: "limit_failure", violations: [v(code)] });
        }
      }
    }
  });

  it("R-UA-2: an unsafe link beside a collision gets the salvage export first (dropping the link may end the collision); the salvage's verdict decides", () => {
    const mixed = [v("symlink_escape", "Link"), v("case_collision", "link")];
    expect(decideExport({ stage: "primary", verdict: "rejected", violations: mixed, salvageAvailable: true })).toEqual({ kind: "salvage" });
    expect(decideExport({ stage: "primary", verdict: "rejected", violations: mixed, salvageAvailable: false })).toEqual({ kind: "limit_failure", violations: [v("case_collision", "link")] });
    expect(decideExport({ stage: "salvage", verdict: "rejected", violations: mixed, salvageAvailable: true })).toEqual({ kind: "limit_failure", violations: [v("case_collision", "link")] });
  });
});

describe("exportLimitFailure", () => {
  it("R-UA-3: a distinct stable code per limit, with the limit, its value and the archive-relative path in the detail", () => {
    expect(exportLimitFailure([v("too_many_entries", "a/b")])).toEqual({
      code: "native_workspace_sync_out_too_many_entries",
      detail: { kind: "limit", violation: "too_many_entries", limit: "maxEntries", max: 200_000, path: "a/b", message: "fixed wording", violationCodes: ["too_many_entries"] },
    });
    expect(exportLimitFailure([v("total_too_large")]).detail).toMatchObject({ limit: "maxTotalBytes", max: 20 * 1024 ** 3 });
    expect(exportLimitFailure([v("entry_too_large")]).detail).toMatchObject({ limit: "maxEntryBytes", max: 5 * 1024 ** 3 });
    expect(exportLimitFailure([v("case_collision", "README"), v("normalization_collision")])).toMatchObject({
      code: "native_workspace_sync_out_case_collision",
      detail: { kind: "collision", limit: "rejectCaseCollisions", max: null, path: "README", violationCodes: ["case_collision", "normalization_collision"] },
    });
    expect(exportLimitFailure([v("normalization_collision")]).detail).toMatchObject({ kind: "collision", limit: null, max: null });
    const codes = Object.values(EXPORT_LIMIT_FAILURE_CODES);
    expect(new Set(codes).size).toBe(codes.length);
    expect(() => exportLimitFailure([v("symlink_escape")])).toThrow(TypeError);
  });

  it("R-UA-3: exportLimitFailureOf finds an ArchiveLimitError through a cause chain and nothing else", () => {
    const error = new ArchiveLimitError([v("entry_too_large", "big.bin")]);
    expect(exportLimitFailureOf(error)?.code).toBe("native_workspace_sync_out_entry_too_large");
    expect(exportLimitFailureOf(new Error("wrapped", { cause: error }))?.detail.path).toBe("big.bin");
    expect(exportLimitFailureOf(new Error("other"))).toBeNull();
    expect(exportLimitFailureOf(null)).toBeNull();
  });
});

describe("salvageLogMessage", () => {
  it("R-UA-2 keeps a provider's short fixed message", () => {
    expect(salvageLogMessage(SALVAGE_INFO_MESSAGE)).toBe(SALVAGE_INFO_MESSAGE);
    expect(salvageLogMessage("Unsafe links were left out of the export.")).toBe("Unsafe links were left out of the export.");
  });

  it("R-UA-4 never lets a path or link target into the informational event", () => {
    for (const leaky of ["link escape -> /etc/passwd", "dropped ../../secret", "C:\\x", "two\nlines", "", "x".repeat(201)]) {
      expect(salvageLogMessage(leaky)).toBe(SALVAGE_INFO_MESSAGE);
    }
  });
});
