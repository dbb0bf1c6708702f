import { describe, expect, it } from "vitest";
import { SALVAGE_INFO_MESSAGE } from "../../src/copyback/archive/salvage";
import { decideExport, salvageLogMessage } from "../../src/finalization/export-policy";

describe("decideExport", () => {
  it.each([
    [{ stage: "primary", verdict: "safe", salvageAvailable: true }, "extract"],
    [{ stage: "salvage", verdict: "safe", salvageAvailable: true }, "extract"],
    [{ stage: "primary", verdict: "rejected", salvageAvailable: true }, "salvage"],
    [{ stage: "primary", verdict: "rejected", salvageAvailable: false }, "omit"],
    [{ stage: "salvage", verdict: "rejected", salvageAvailable: true }, "omit"],
  ] as const)("R-UA-2/R-UA-3 %o -> %s", (input, kind) => {
    expect(decideExport(input)).toEqual({ kind });
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
