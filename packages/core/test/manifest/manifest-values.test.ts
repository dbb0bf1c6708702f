import { describe, expect, it } from "vitest";
import {
  compileExclude,
  entriesEqual,
  manifestsEqual,
  parseManifest,
  sealManifest,
  type Manifest,
  type ManifestEntry,
} from "../../src/copyback/manifest/index";

const H = (c: string) => c.repeat(64);
const valid: Manifest = {
  version: 1,
  entries: [
    { path: "src", type: "directory", mode: 0o755 },
    { path: "src/a.ts", type: "file", mode: 0o644, sha256: H("a"), size: 3 },
    { path: "link", type: "symlink", mode: 0o777, target: "src/a.ts" },
  ],
};

describe("parseManifest", () => {
  it("accepts a stored manifest (JSON round trip) and returns it sorted", () => {
    const parsed = parseManifest(JSON.parse(JSON.stringify(valid)));
    expect(parsed.entries.map((e) => e.path)).toEqual(["link", "src", "src/a.ts"]);
    expect(parsed.entries[2]).toEqual(valid.entries[1]);
  });

  const bad: [string, unknown][] = [
    ["a wrong version", { ...valid, version: 2 }],
    ["no entries array", { version: 1 }],
    [
      "an absolute path",
      { version: 1, entries: [{ path: "/etc/passwd", type: "file", mode: 0o644, sha256: H("a") }] },
    ],
    [
      "a .. segment",
      { version: 1, entries: [{ path: "a/../../x", type: "file", mode: 0o644, sha256: H("a") }] },
    ],
    [
      "a ./ prefix",
      { version: 1, entries: [{ path: "./x", type: "file", mode: 0o644, sha256: H("a") }] },
    ],
    [
      "a duplicate path",
      {
        version: 1,
        entries: [
          { path: "x", type: "file", mode: 0o644, sha256: H("a") },
          { path: "x", type: "directory", mode: 0o755 },
        ],
      },
    ],
    [
      "a parent that is not listed",
      { version: 1, entries: [{ path: "d/x", type: "file", mode: 0o644, sha256: H("a") }] },
    ],
    [
      "a parent that is a file",
      {
        version: 1,
        entries: [
          { path: "d", type: "file", mode: 0o644, sha256: H("a") },
          { path: "d/x", type: "file", mode: 0o644, sha256: H("b") },
        ],
      },
    ],
    ["a file without sha256", { version: 1, entries: [{ path: "x", type: "file", mode: 0o644 }] }],
    [
      "an uppercase or short hash",
      { version: 1, entries: [{ path: "x", type: "file", mode: 0o644, sha256: "ABC" }] },
    ],
    [
      "a mode beyond 0777",
      { version: 1, entries: [{ path: "x", type: "directory", mode: 0o4755 }] },
    ],
    [
      "a symlink without target",
      { version: 1, entries: [{ path: "x", type: "symlink", mode: 0o777 }] },
    ],
    ["an unknown type", { version: 1, entries: [{ path: "x", type: "fifo", mode: 0o644 }] }],
    ["not an object", "manifest"],
    // The schema's rules on every field present, also on a type that does not carry it.
    ["an entry that is not an object", { version: 1, entries: [null] }],
    ["an entry that is an array", { version: 1, entries: [["x", "file"]] }],
    ["a hole in the entries", { version: 1, entries: new Array(1) }],
    ["a path that is not a string", { version: 1, entries: [{ path: 1, type: "directory", mode: 0o755 }] }],
    ["a fractional mode", { version: 1, entries: [{ path: "x", type: "directory", mode: 0.5 }] }],
    ["a mode given as text", { version: 1, entries: [{ path: "x", type: "directory", mode: "755" }] }],
    ["an infinite size", { version: 1, entries: [{ path: "x", type: "file", mode: 0o644, sha256: H("a"), size: Infinity }] }],
    ["a size beyond the safe integers", { version: 1, entries: [{ path: "x", type: "file", mode: 0o644, sha256: H("a"), size: 2 ** 53 }] }],
    ["a negative size", { version: 1, entries: [{ path: "x", type: "file", mode: 0o644, sha256: H("a"), size: -1 }] }],
    ["a bad hash on a directory", { version: 1, entries: [{ path: "x", type: "directory", mode: 0o755, sha256: "x" }] }],
    ["an empty target on a file", { version: 1, entries: [{ path: "x", type: "file", mode: 0o644, sha256: H("a"), target: "" }] }],
  ];
  it("keeps only the fields an entry's type carries (unknown keys and other types' fields are dropped)", () => {
    const parsed = parseManifest({
      version: 1,
      entries: [
        { path: "d", type: "directory", mode: 0o755, sha256: H("a"), size: 1, target: "t", owner: 0 },
        { path: "d/f", type: "file", mode: 0o644, sha256: H("b"), size: 2, target: "t", size2: 3 },
        { path: "l", type: "symlink", mode: 0o777, target: "d", sha256: H("c") },
      ],
    });
    expect(parsed.entries).toEqual([
      { path: "d", type: "directory", mode: 0o755 },
      { path: "d/f", type: "file", mode: 0o644, sha256: H("b"), size: 2 },
      { path: "l", type: "symlink", mode: 0o777, target: "d" },
    ]);
    expect(Object.keys(parsed.entries[0]!)).toEqual(["path", "type", "mode"]);
  });

  for (const [name, value] of bad) {
    it(`refuses ${name}`, () => {
      expect(() => parseManifest(value)).toThrow(
        expect.objectContaining({ code: "invalid_manifest" }),
      );
    });
  }

  // sealManifest: the receive's own snapshot manifest, checked in place. Every
  // refusal of parseManifest holds for it too, and what the schema would strip is refused.
  describe("sealManifest", () => {
    it("returns the same manifest, sorted and frozen, which parseManifest then takes as is", () => {
      const own = JSON.parse(JSON.stringify(valid)) as Manifest;
      const entry = own.entries[1];
      const sealed = sealManifest(own);
      expect(sealed.entries.map((e) => e.path)).toEqual(["link", "src", "src/a.ts"]);
      expect(sealed.entries[2]).toBe(entry);
      expect(Object.isFrozen(sealed) && Object.isFrozen(sealed.entries) && Object.isFrozen(entry)).toBe(true);
      expect(parseManifest(sealed)).toBe(sealed);
    });

    const stricter: [string, unknown][] = [
      ["an unknown field", { version: 1, entries: [{ path: "x", type: "directory", mode: 0o755, owner: 0 }] }],
      ["a hash on a directory", { version: 1, entries: [{ path: "x", type: "directory", mode: 0o755, sha256: H("a") }] }],
      ["a target on a file", { version: 1, entries: [{ path: "x", type: "file", mode: 0o644, sha256: H("a"), target: "y" }] }],
      ["a field present as undefined", { version: 1, entries: [{ path: "x", type: "file", mode: 0o644, sha256: H("a"), size: undefined }] }],
    ];
    for (const [name, value] of [...bad, ...stricter]) {
      it(`refuses ${name}`, () => {
        expect(() => sealManifest(value as Manifest)).toThrow(
          expect.objectContaining({ code: "invalid_manifest" }),
        );
      });
    }
  });
});

describe("manifestsEqual and entriesEqual", () => {
  const copy = (): Manifest => JSON.parse(JSON.stringify(valid));
  const edit = (i: number, change: Partial<ManifestEntry>): Manifest => {
    const m = copy();
    m.entries[i] = { ...m.entries[i]!, ...change };
    return m;
  };

  it("equal manifests, in any order", () => {
    expect(manifestsEqual(valid, copy())).toBe(true);
    expect(manifestsEqual(valid, { version: 1, entries: [...copy().entries].reverse() })).toBe(
      true,
    );
  });

  it("differ by path, type, hash, mode, link target or an extra entry", () => {
    expect(manifestsEqual(valid, edit(1, { sha256: H("b") }))).toBe(false);
    expect(manifestsEqual(valid, edit(1, { mode: 0o755 }))).toBe(false);
    expect(manifestsEqual(valid, edit(0, { mode: 0o700 }))).toBe(false);
    expect(manifestsEqual(valid, edit(2, { target: "src" }))).toBe(false);
    expect(manifestsEqual(valid, edit(2, { path: "link2" }))).toBe(false);
    expect(manifestsEqual(valid, edit(0, { type: "file", sha256: H("c") }))).toBe(false);
    expect(
      manifestsEqual(valid, {
        version: 1,
        entries: [...copy().entries, { path: "new", type: "directory", mode: 0o755 }],
      }),
    ).toBe(false);
    expect(
      manifestsEqual(valid, { version: 1, entries: [...copy().entries, copy().entries[0]!] }),
    ).toBe(false);
  });

  it("ignores symlink modes (Linux cannot set them) and decides files by size before hashes", () => {
    expect(manifestsEqual(valid, edit(2, { mode: 0o755 }))).toBe(true);
    expect(
      entriesEqual(
        { path: "x", type: "file", mode: 0o644, size: 1 },
        { path: "x", type: "file", mode: 0o644, size: 2, sha256: H("a") },
      ),
    ).toBe(false);
    // Without a hash on one side two same-sized files are never assumed equal.
    expect(
      entriesEqual(
        { path: "x", type: "file", mode: 0o644, size: 1 },
        { path: "x", type: "file", mode: 0o644, size: 1, sha256: H("a") },
      ),
    ).toBe(false);
    expect(entriesEqual(undefined, undefined)).toBe(true);
    expect(entriesEqual(undefined, valid.entries[0])).toBe(false);
  });
});

describe("compileExclude", () => {
  it("matches names at any depth and root-relative paths with what is below them", () => {
    const excluded = compileExclude(["node_modules", ".git/objects/", "./build"]);
    const yes = [
      "node_modules",
      "a/node_modules",
      "a/node_modules/x",
      ".git/objects",
      ".git/objects/ab",
      "build",
      "build/x",
    ];
    const no = [
      "node_modules2",
      "a/my_node_modules",
      ".git",
      ".git/HEAD",
      "x/.git/objects",
      "builds",
      "a/build",
    ];
    expect(yes.filter((p) => !excluded(p))).toEqual([]);
    expect(no.filter(excluded)).toEqual([]);
  });

  it("matches nothing when empty and refuses unsafe patterns", () => {
    expect(compileExclude()("anything")).toBe(false);
    for (const bad of ["..", "a/../b", "/abs", "", "a//b"])
      expect(() => compileExclude([bad])).toThrow(
        expect.objectContaining({ code: "invalid_exclude" }),
      );
  });
});
