import { describe, expect, it } from "vitest";
import { formatBytes } from "./bytes";

describe("formatBytes", () => {
  it.each([
    [0, "0 B"],
    [812, "812 B"],
    [999, "999 B"],
    [1000, "1.0 KB"],
    [4200, "4.2 KB"],
    [13_000_000, "13 MB"],
    [999_999, "1000 KB"],
    [5e15, "5000 TB"],
  ])("%d bytes read %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });
});
