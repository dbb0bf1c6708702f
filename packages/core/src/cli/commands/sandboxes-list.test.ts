import { describe, expect, it } from "vitest";
import { sizeText } from "./sandboxes-list";

const size = { bytes: 1_536, entries: 3, workspaceBytes: 1_024, workspaceEntries: 2, lowerBound: null, measuredAt: new Date(0) };

describe("copyback sandboxes list: the size column", () => {
  it("says unknown where the provider did not tell", () => {
    expect(sizeText(null)).toBe("unknown");
  });
  it("gives an exact size in human units with its entries", () => {
    expect(sizeText(size)).toBe("1.5 KiB, 3 entries");
    expect(sizeText({ ...size, bytes: 12, entries: 1 })).toBe("12 B, 1 entry");
  });
  it("flags a lower bound", () => {
    expect(sizeText({ ...size, bytes: 3 * 1024 ** 3, entries: 250_000, lowerBound: "time_budget" })).toBe("at least 3.0 GiB, 250000 entries");
  });
});
