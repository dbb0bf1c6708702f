import { describe, expect, it } from "vitest";
import {
  FINALIZE_CHANGES_SCHEMA,
  MAX_RECORDED_PATHS,
  readFinalizeChanges,
  recordFinalizeChanges,
} from "../../src/finalization/finalize-changes";

describe("recordFinalizeChanges", () => {
  it("sorts the paths by code unit and keeps the counts", () => {
    expect(recordFinalizeChanges(["b.txt", "B.txt", "a/z", "a"], ["old.txt"])).toEqual({
      schema: FINALIZE_CHANGES_SCHEMA,
      written: ["B.txt", "a", "a/z", "b.txt"],
      deleted: ["old.txt"],
      writtenCount: 4,
      deletedCount: 1,
      truncated: false,
    });
  });

  it("caps each list at MAX_RECORDED_PATHS, keeping the first sorted ones, and says it truncated", () => {
    const many = Array.from({ length: MAX_RECORDED_PATHS + 1 }, (_, i) => `f${String(MAX_RECORDED_PATHS - i).padStart(4, "0")}`);
    const record = recordFinalizeChanges([], many);
    expect(record.deleted).toHaveLength(MAX_RECORDED_PATHS);
    expect(record.deleted[0]).toBe("f0000");
    expect(record.deletedCount).toBe(MAX_RECORDED_PATHS + 1);
    expect(record.truncated).toBe(true);
    expect(readFinalizeChanges({ changes: record })).toEqual({ kind: "present", value: record });
  });

  it("does not reorder the caller's array", () => {
    const written = ["b", "a"];
    recordFinalizeChanges(written, []);
    expect(written).toEqual(["b", "a"]);
  });
});

describe("readFinalizeChanges", () => {
  const good = recordFinalizeChanges(["a.txt"], ["b.txt"]);

  it("reads an operation without a record (an older one) as absent", () => {
    expect(readFinalizeChanges({ written: 2, deleted: 0 })).toEqual({ kind: "absent" });
    expect(readFinalizeChanges({ changes: null })).toEqual({ kind: "absent" });
  });

  it("refuses records of another version or inconsistent ones", () => {
    for (const bad of [
      { ...good, schema: "copyback.workspace-finalize-changes.v2" },
      { ...good, writtenCount: 0 },
      { ...good, truncated: true },
      { ...good, written: [""] },
      { ...good, extra: 1 },
      { ...good, deleted: Array.from({ length: MAX_RECORDED_PATHS + 1 }, (_, i) => `p${i}`), deletedCount: MAX_RECORDED_PATHS + 1 },
      "changes",
    ]) {
      expect(readFinalizeChanges({ changes: bad }).kind).toBe("invalid");
    }
    for (const metadata of [null, [], "x"]) expect(readFinalizeChanges(metadata).kind).toBe("invalid");
  });
});
