import { describe, expect, it } from "vitest";
import { finalizeChangesOf } from "./finalize-changes";

describe("finalizeChangesOf", () => {
  it("reads the written and deleted paths of a finalize operation", () => {
    expect(finalizeChangesOf({ written: ["notes/builder.log"], deleted: ["old.txt"], unchanged: false })).toEqual({
      written: ["notes/builder.log"],
      deleted: ["old.txt"],
      unchanged: false,
      omitted: false,
    });
  });

  it("reads an unchanged or omitted copyback as one with no paths", () => {
    expect(finalizeChangesOf({ unchanged: true })).toEqual({ written: [], deleted: [], unchanged: true, omitted: false });
    expect(finalizeChangesOf({ omitted: true, unchanged: false })).toMatchObject({ omitted: true, written: [] });
  });

  it("reads metadata of another shape as no change list", () => {
    for (const metadata of [null, "x", [], {}, { written: "notes" }, { written: [1] }, { descriptor: {} }])
      expect(finalizeChangesOf(metadata)).toBeNull();
  });
});
