import { describe, expect, it } from "vitest";
import { recordFinalizeChanges } from "@copyback/core/finalization";
import { MAX_CHANGED_PATHS, finalizeChangesOf } from "./finalize-changes";

describe("finalizeChangesOf", () => {
  it("reads the written and deleted paths of a finalize operation", () => {
    expect(finalizeChangesOf({ written: ["notes/builder.log"], deleted: ["old.txt"], unchanged: false })).toEqual({
      written: { paths: ["notes/builder.log"], total: 1 },
      deleted: { paths: ["old.txt"], total: 1 },
      unchanged: false,
      omitted: false,
    });
  });

  it("reads the finalizer's versioned record: its sorted paths and exact counts, over the counts beside it", () => {
    const metadata = { attempt: 1, written: 2, deleted: 1, unchanged: false, stage: "primary", changes: recordFinalizeChanges(["z.txt", "a/b.txt"], ["old.txt"]) };
    expect(finalizeChangesOf(metadata)).toEqual({
      written: { paths: ["a/b.txt", "z.txt"], total: 2 },
      deleted: { paths: ["old.txt"], total: 1 },
      unchanged: false,
      omitted: false,
    });
  });

  it("a truncated record gives the first paths and the full count (the page shows how many more)", () => {
    const written = Array.from({ length: MAX_CHANGED_PATHS + 4 }, (_, i) => `f${String(i).padStart(4, "0")}`);
    const changes = finalizeChangesOf({ written: written.length, deleted: 0, unchanged: false, changes: recordFinalizeChanges(written, []) });
    expect(changes?.written.total).toBe(MAX_CHANGED_PATHS + 4);
    expect(changes?.written.paths).toEqual(written.slice(0, MAX_CHANGED_PATHS));
  });

  it("a record it cannot read falls back to the counts beside it", () => {
    const broken = { ...recordFinalizeChanges(["a"], []), writtenCount: -1 };
    expect(finalizeChangesOf({ written: 1, deleted: 0, unchanged: false, changes: broken })).toEqual({
      written: { paths: null, total: 1 },
      deleted: { paths: null, total: 0 },
      unchanged: false,
      omitted: false,
    });
  });

  it("reads counts when the operation recorded counts only", () => {
    expect(finalizeChangesOf({ stage: "primary", attempt: 1, written: 2, deleted: 0, unchanged: false })).toEqual({
      written: { paths: null, total: 2 },
      deleted: { paths: null, total: 0 },
      unchanged: false,
      omitted: false,
    });
  });

  it("keeps the first paths of a long list and the exact count", () => {
    const written = Array.from({ length: MAX_CHANGED_PATHS + 7 }, (_, i) => `f${i}`);
    const changes = finalizeChangesOf({ written });
    expect(changes?.written.total).toBe(MAX_CHANGED_PATHS + 7);
    expect(changes?.written.paths).toHaveLength(MAX_CHANGED_PATHS);
  });

  it("reads an unchanged or omitted copyback as one with no paths", () => {
    expect(finalizeChangesOf({ unchanged: true })).toEqual({
      written: { paths: [], total: 0 },
      deleted: { paths: [], total: 0 },
      unchanged: true,
      omitted: false,
    });
    expect(finalizeChangesOf({ omitted: true, unchanged: false })).toMatchObject({ omitted: true });
  });

  it("reads metadata of another shape as no change list", () => {
    for (const metadata of [null, "x", [], {}, { written: "notes" }, { written: [1] }, { written: -1 }, { descriptor: {} }])
      expect(finalizeChangesOf(metadata)).toBeNull();
  });
});
