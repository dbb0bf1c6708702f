import { describe, expect, it } from "vitest";
import { sandboxSizeDetail, sandboxSizeText } from "./sandbox-size";

describe("sandboxSizeText", () => {
  it("says unknown where the provider did not tell", () => {
    expect(sandboxSizeText(null)).toBe("size unknown");
    expect(sandboxSizeDetail(null)).toMatch(/does not tell/);
  });

  it("states an exact size in human units", () => {
    const size = { bytes: 4_200, entries: 3, workspaceBytes: 4_000, lowerBound: null };
    expect(sandboxSizeText(size)).toBe("4.2 KB");
    expect(sandboxSizeDetail(size)).toBe("3 entries; the workspace holds 4.0 KB.");
  });

  it("flags a lower bound and says why", () => {
    const size = { bytes: 1_300_000_000, entries: 250_000, workspaceBytes: 1_200_000_000, lowerBound: "time_budget" as const };
    expect(sandboxSizeText(size)).toBe("at least 1.3 GB");
    expect(sandboxSizeDetail(size)).toBe("250,000 entries; the workspace holds 1.2 GB; a lower bound: the measurement ran out of time.");
    expect(sandboxSizeDetail({ ...size, entries: 1, lowerBound: "unreadable" })).toMatch(/^1 entry; .*could not be read\.$/);
  });
});
