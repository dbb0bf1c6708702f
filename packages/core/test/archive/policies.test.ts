import { describe, expect, it } from "vitest";
import { checkEntryPath, checkLinkTarget } from "../../src/copyback/archive/entry-path";
import { DEFAULT_ARCHIVE_LIMITS, resolveLimits } from "../../src/copyback/archive/limits";
import { checkPaxRecords, parsePaxRecords } from "../../src/copyback/archive/pax-policy";
import { resolveLinkTarget, type LinkLookup } from "../../src/copyback/archive/symlink-resolution";
import { ArchiveTreePolicy } from "../../src/copyback/archive/tree-policy";
import { reportablePath } from "../../src/copyback/archive/violations";
import { paxRecord } from "./tar-builder";

const limits = DEFAULT_ARCHIVE_LIMITS;

describe("entry path policy", () => {
  it.each([
    ["a/b.txt", ["a", "b.txt"]],
    ["./a//b/", ["a", "b"]],
    ["./", []],
    [".", []],
    ["..foo/bar..", ["..foo", "bar.."]],
  ])("accepts %j", (raw, components) => {
    expect(checkEntryPath(raw, limits)).toEqual({ ok: true, components });
  });

  it.each([
    ["/etc/passwd", "absolute_path"],
    ["C:evil", "absolute_path"],
    ["a/../../b", "parent_traversal"],
    ["..", "parent_traversal"],
    ["a\\b", "invalid_path"],
    ["a\0b", "invalid_path"],
    [`${"x".repeat(256)}`, "path_too_long"],
    [`${"a/".repeat(65)}f`, "path_too_deep"],
  ])("refuses %j with %s", (raw, code) => {
    const result = checkEntryPath(raw, limits);
    expect(result.ok === false && result.violation.code).toBe(code);
  });

  it("judges link targets as text: absolute and backslash refused, '..' left to resolution", () => {
    expect(checkLinkTarget("l", "/etc", limits)?.code).toBe("absolute_symlink");
    expect(checkLinkTarget("l", "..\\x", limits)?.code).toBe("invalid_path");
    expect(checkLinkTarget("l", "../sibling", limits)).toBeUndefined();
  });

  it("reports paths without a leading root or control characters", () => {
    expect(reportablePath("/etc/passwd")).toBe("etc/passwd");
    expect(reportablePath("C:\\x")).toBe("x");
    expect(reportablePath("a\nb")).toBe("a\\x0ab");
  });
});

describe("symlink resolution", () => {
  const links =
    (map: Record<string, string>) =>
    (c: readonly string[]): LinkLookup => {
      const target = map[c.join("/")];
      return target === undefined ? { kind: "other" } : { kind: "symlink", target };
    };

  it("expands links before applying a following '..' (like the kernel)", async () => {
    const lookup = links({ "a/up": ".." });
    expect(await resolveLinkTarget([], "a/up/x", lookup)).toEqual({
      kind: "inside",
      components: ["x"],
    });
    expect(await resolveLinkTarget([], "a/up/..", lookup)).toEqual({ kind: "escape" });
  });

  it("treats any step above the root as an escape, even if it comes back", async () => {
    expect(await resolveLinkTarget(["d"], "../../d/x", links({}))).toEqual({ kind: "escape" });
  });

  it("detects loops and absolute links met on the way", async () => {
    expect(await resolveLinkTarget([], "a", links({ a: "b", b: "a" }))).toEqual({ kind: "loop" });
    expect(await resolveLinkTarget([], "abs/x", links({ abs: "/tmp" }))).toEqual({
      kind: "escape",
    });
    expect(await resolveLinkTarget([], "/x", links({}))).toEqual({ kind: "absolute" });
  });
});

describe("tree policy", () => {
  it("allows a directory entry after the files inside it, and a later regular file beside a link", async () => {
    const tree = new ArchiveTreePolicy(limits);
    expect(tree.add("a/b", ["a", "b"], "file")).toBeUndefined();
    expect(tree.add("a/", ["a"], "directory")).toBeUndefined();
    expect(tree.add("l", ["l"], "symlink", "a/b")).toBeUndefined();
    expect(tree.add("m", ["m"], "file")).toBeUndefined();
    expect(await tree.finish()).toEqual([]);
  });

  it("allows case-only differences when case collisions are explicitly allowed", () => {
    const tree = new ArchiveTreePolicy({ rejectCaseCollisions: false });
    expect(tree.add("README", ["README"], "file")).toBeUndefined();
    expect(tree.add("readme", ["readme"], "file")).toBeUndefined();
  });
});

describe("pax policy", () => {
  it("parses well-formed records, including multi-byte values", () => {
    const body = Buffer.from(paxRecord("path", "ファイル/x") + paxRecord("mtime", "1700000000.25"));
    expect(parsePaxRecords(body)).toEqual({
      ok: true,
      records: [
        ["path", "ファイル/x"],
        ["mtime", "1700000000.25"],
      ],
    });
  });

  it("accepts attribute namespaces but not keys that change paths, sizes or types", () => {
    expect(
      checkPaxRecords(
        [
          ["SCHILY.xattr.user.a", "1"],
          ["LIBARCHIVE.xattr.b", "2"],
        ],
        false,
      ),
    ).toBeUndefined();
    expect(checkPaxRecords([["GNU.sparse.map", "0,1"]], false)).toBeDefined();
    expect(checkPaxRecords([["SCHILY.filetype", "socket"]], false)).toBeDefined();
    expect(checkPaxRecords([["comment", "built by ci"]], true)).toBeUndefined();
    expect(checkPaxRecords([["path", "x"]], true)).toBeDefined();
  });
});

describe("limits", () => {
  it("are overridable and refuse nonsense", () => {
    expect(resolveLimits({ maxEntries: 5 }).maxEntries).toBe(5);
    expect(resolveLimits({}).maxPathBytes).toBe(4096);
    expect(() => resolveLimits({ maxEntries: -1 })).toThrow(TypeError);
    expect(() => resolveLimits({ nope: 1 } as never)).toThrow(TypeError);
  });
});
