// mergeBytes: the merge metrics' byte counts, from a sealed manifest in one lockstep
// pass with the plan's written paths, from any other manifest through a set; both the same.
import { describe, expect, it } from "vitest";
import { parseManifest } from "../manifest/parse";
import type { Manifest, ManifestEntry } from "../manifest/types";
import { mergeBytes } from "./merge-bytes";

const file = (path: string, size: number): ManifestEntry => ({ path, type: "file", mode: 0o644, size, sha256: "0".repeat(64) });
const entries: ManifestEntry[] = [
  { path: "a", type: "directory", mode: 0o755 },
  file("a/b.txt", 3),
  file("a/c.txt", 5),
  file("a-b", 7),
  { path: "l", type: "symlink", mode: 0o777, target: "a-b" },
  file("z", 11),
];

describe("mergeBytes", () => {
  it("counts the written files' bytes of a sealed manifest without a set, as a set would", () => {
    const sealed = parseManifest({ version: 1, entries });
    // The plan's order: code-unit path order ("a-b" before "a/c.txt"), directories and links among the files.
    const written = ["a", "a-b", "a/c.txt", "l"];
    expect(mergeBytes(sealed, { kind: "applied", written, deleted: [] })).toEqual({ writtenBytes: 12, snapshotBytes: 26 });
    const unsorted: Manifest = { version: 1, entries: [...entries].reverse() };
    expect(mergeBytes(unsorted, { kind: "applied", written, deleted: [] })).toEqual({ writtenBytes: 12, snapshotBytes: 26 });
  });

  it("a written path the manifest does not hold, and none written, count nothing", () => {
    const sealed = parseManifest({ version: 1, entries });
    expect(mergeBytes(sealed, { kind: "applied", written: ["0", "a/b.txt", "b", "zz"], deleted: [] })).toEqual({ writtenBytes: 3, snapshotBytes: 26 });
    expect(mergeBytes(sealed, { kind: "unchanged" })).toEqual({ writtenBytes: 0, snapshotBytes: 26 });
    expect(mergeBytes(undefined, { kind: "unchanged" })).toEqual({});
  });
});
