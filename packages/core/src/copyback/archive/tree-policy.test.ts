// R-UA-2: the archive tree policy on its own, entry by entry (no tar, no file system). Every
// refusal is compared whole: code, reportable path and the fixed detail wording (R-UA-4: the
// wording is the only text a refusal carries, so it is part of the contract).
import { describe, expect, it } from "vitest";
import { ArchiveTreePolicy, foldKey, linkLookupKey, type TreeEntryKind } from "./tree-policy";
import type { ArchiveViolation } from "./violations";

const STRICT = { rejectCaseCollisions: true } as const;
const LENIENT = { rejectCaseCollisions: false } as const;

type Entry = [path: string, kind: TreeEntryKind, target?: string, resolve?: boolean];

function components(path: string): string[] {
  return path.split("/").filter((c) => c !== "" && c !== ".");
}

/** Adds the entries in order; returns each entry's violation (undefined when accepted). */
function addAll(
  tree: ArchiveTreePolicy,
  entries: readonly Entry[],
): (ArchiveViolation | undefined)[] {
  return entries.map(([path, kind, target, resolve]) =>
    resolve === undefined
      ? tree.add(path, components(path), kind, target)
      : tree.add(path, components(path), kind, target, resolve),
  );
}

const v = (code: ArchiveViolation["code"], path: string, detail: string): ArchiveViolation => ({
  code,
  path,
  detail,
});

describe("foldKey and linkLookupKey", () => {
  it("R-UA-2: the fold is NFC, then upper case, then lower case", () => {
    expect(foldKey("ReadMe.TXT")).toBe("readme.txt");
    // Upper-then-lower is not lower alone: a final sigma upper-cases to the capital sigma, so it
    // meets the ordinary small sigma (one name on a host that compares upper-cased names).
    expect(foldKey("\u03c2")).toBe("\u03c3");
    expect(foldKey("stra\u00dfe")).toBe("strasse");
    // NFC first: a decomposed "é" folds to the composed one.
    expect(foldKey("Cafe\u0301")).toBe("caf\u00e9");
  });

  it("R-UA-2: an ASCII name (the fast path) folds exactly as NFC, upper, then lower case would", () => {
    const all = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c)).join("");
    for (const name of [all, "ReadMe.TXT", "src/Index.TS", ""]) {
      expect(foldKey(name)).toBe(name.normalize("NFC").toUpperCase().toLowerCase());
      expect(linkLookupKey(name, LENIENT)).toBe(name.normalize("NFC"));
    }
  });

  it("R-UA-2: a link's lookup key is folded only while case collisions are refused; NFC always", () => {
    expect(linkLookupKey("D/Esc", STRICT)).toBe("d/esc");
    expect(linkLookupKey("D/Esc", LENIENT)).toBe("D/Esc");
    expect(linkLookupKey("Cafe\u0301", LENIENT)).toBe("Caf\u00e9");
    expect(linkLookupKey("Cafe\u0301", STRICT)).toBe("caf\u00e9");
  });
});

describe("ArchiveTreePolicy.add: the archive root", () => {
  it("R-UA-2: the root may be a directory, once", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(tree.add(".", [], "directory")).toBeUndefined();
    expect(tree.add("./", [], "directory")).toEqual(
      v("duplicate_entry", "./", "the archive root appears twice"),
    );
    // A third time is still a duplicate: the first sighting is what counts.
    expect(tree.add(".", [], "directory")).toEqual(
      v("duplicate_entry", ".", "the archive root appears twice"),
    );
  });

  it.each<TreeEntryKind>(["file", "symlink"])("R-UA-2: the root can never be a %s", (kind) => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(tree.add(".", [], kind, kind === "symlink" ? "x" : undefined)).toEqual(
      v("type_conflict", ".", "the archive root can only be a directory"),
    );
    // The refused entry did not take the root: a directory root is still accepted after it.
    expect(tree.add(".", [], "directory")).toBeUndefined();
  });
});

describe("ArchiveTreePolicy.add: parents and duplicates", () => {
  it("R-UA-2: an entry below a symlink is refused as passing through it", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["link", "symlink", "dir"],
        ["link/x", "file"],
      ]),
    ).toEqual([
      undefined,
      v(
        "through_symlink",
        "link/x",
        "entry path passes through a symbolic link from earlier in the archive",
      ),
    ]);
  });

  it("R-UA-2: a deeper parent that is a symlink is found too (every prefix is checked)", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["a/", "directory"],
        ["a/l", "symlink", ".."],
        ["a/l/b/c", "file"],
      ]),
    ).toEqual([
      undefined,
      undefined,
      v(
        "through_symlink",
        "a/l/b/c",
        "entry path passes through a symbolic link from earlier in the archive",
      ),
    ]);
  });

  it("R-UA-2: an entry below a regular file is a type conflict", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["f", "file"],
        ["f/x", "file"],
      ]),
    ).toEqual([undefined, v("type_conflict", "f/x", "a parent of this entry is a regular file")]);
  });

  it("R-UA-2: each sibling below a refused parent is refused again (a refusal is not remembered as passed parents)", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["d/f", "file"],
        ["d/f/x", "file"],
        ["d/f/y", "file"],
        ["d/l", "symlink", "f"],
        ["d/l/x", "file"],
        ["d/l/y", "file"],
        ["d/g", "file"],
      ]),
    ).toEqual([
      undefined,
      v("type_conflict", "d/f/x", "a parent of this entry is a regular file"),
      v("type_conflict", "d/f/y", "a parent of this entry is a regular file"),
      undefined,
      v("through_symlink", "d/l/x", "entry path passes through a symbolic link from earlier in the archive"),
      v("through_symlink", "d/l/y", "entry path passes through a symbolic link from earlier in the archive"),
      undefined,
    ]);
  });

  it("R-UA-2: siblings after a refused link over their implied parent still pass as its children; a sibling's name never becomes a parent unchecked", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["p/a", "file"],
        ["p", "symlink", "elsewhere"],
        ["p/b", "file"],
        ["p/c", "file"],
        ["p/c/d", "file"],
      ]),
    ).toEqual([
      undefined,
      v("through_symlink", "p", "a symbolic link replaces a directory that earlier entries were written into"),
      undefined,
      undefined,
      v("type_conflict", "p/c/d", "a parent of this entry is a regular file"),
    ]);
  });

  it.each<[string, Entry[]]>([
    [
      "two files",
      [
        ["a", "file"],
        ["a", "file"],
      ],
    ],
    [
      "two directories",
      [
        ["a/", "directory"],
        ["a/", "directory"],
      ],
    ],
    [
      "a directory named again after entries inside it",
      [
        ["a/", "directory"],
        ["a/b", "file"],
        ["a/", "directory"],
      ],
    ],
    [
      "a file, then a directory",
      [
        ["a", "file"],
        ["a/", "directory"],
      ],
    ],
    [
      "a symlink, then a file",
      [
        ["a", "symlink", "b"],
        ["a", "file"],
      ],
    ],
  ])("R-UA-2: the same path twice is a duplicate entry (%s)", (_name, entries) => {
    const tree = new ArchiveTreePolicy(STRICT);
    const results = addAll(tree, entries);
    expect(results.slice(0, -1)).toEqual(entries.slice(0, -1).map(() => undefined));
    expect(results.at(-1)).toEqual(
      v("duplicate_entry", entries.at(-1)![0], "the same path appears twice in the archive"),
    );
  });

  it("R-UA-2: a directory named after entries inside it keeps its kind; a symlink cannot take its place later", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["d/", "directory"],
        ["d/x", "file"],
        ["d", "symlink", "elsewhere"],
      ]),
    ).toEqual([
      undefined,
      undefined,
      v("duplicate_entry", "d", "the same path appears twice in the archive"),
    ]);
  });

  it("R-UA-2: a symlink over a directory that earlier entries implied is refused", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["d/x", "file"],
        ["d", "symlink", "elsewhere"],
      ]),
    ).toEqual([
      undefined,
      v(
        "through_symlink",
        "d",
        "a symbolic link replaces a directory that earlier entries were written into",
      ),
    ]);
  });

  it("R-UA-2: a regular file over a directory that earlier entries implied is refused", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["d/x", "file"],
        ["d", "file"],
      ]),
    ).toEqual([
      undefined,
      v(
        "type_conflict",
        "d",
        "a regular file replaces a directory that earlier entries were written into",
      ),
    ]);
  });

  it("R-UA-2: an implied directory named later becomes a directory, once", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["d/e/x", "file"],
        ["d/e/", "directory"],
        ["d/", "directory"],
        ["d/e/", "directory"],
      ]),
    ).toEqual([
      undefined,
      undefined,
      undefined,
      v("duplicate_entry", "d/e/", "the same path appears twice in the archive"),
    ]);
  });
});

describe("ArchiveTreePolicy.add: names that are one file on some host", () => {
  it("R-UA-2: two paths differing only by Unicode normalization collide (also as parents)", () => {
    const nfc = "caf\u00e9";
    const nfd = "cafe\u0301";
    const tree = new ArchiveTreePolicy(LENIENT);
    expect(
      addAll(tree, [
        [nfc, "file"],
        [nfd, "file"],
      ]),
    ).toEqual([
      undefined,
      v("normalization_collision", nfd, "two paths differ only by Unicode normalization (NFC/NFD)"),
    ]);
    const parents = new ArchiveTreePolicy(LENIENT);
    expect(
      addAll(parents, [
        [`${nfd}/a`, "file"],
        [`${nfc}/b`, "file"],
      ]),
    ).toEqual([
      undefined,
      v(
        "normalization_collision",
        `${nfc}/b`,
        "two paths differ only by Unicode normalization (NFC/NFD)",
      ),
    ]);
  });

  it("R-UA-2: two paths differing only by letter case collide when case collisions are refused", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["README", "file"],
        ["readme", "file"],
      ]),
    ).toEqual([undefined, v("case_collision", "readme", "two paths differ only by letter case")]);
    // As implied parents too, and with the fold's full mapping (final sigma against small sigma).
    const parents = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(parents, [
        ["Src/a", "file"],
        ["SRC/b", "file"],
        ["\u03c2.txt", "file"],
        ["\u03c3.txt", "file"],
      ]),
    ).toEqual([
      undefined,
      v("case_collision", "SRC/b", "two paths differ only by letter case"),
      undefined,
      v("case_collision", "\u03c3.txt", "two paths differ only by letter case"),
    ]);
  });

  it("R-UA-2: a refused colliding entry leaves no trace: the first name keeps its place", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["A", "file"],
        ["a", "file"],
        ["a", "file"],
        ["A/x", "file"],
      ]),
    ).toEqual([
      undefined,
      v("case_collision", "a", "two paths differ only by letter case"),
      v("case_collision", "a", "two paths differ only by letter case"),
      v("type_conflict", "A/x", "a parent of this entry is a regular file"),
    ]);
  });

  it("R-UA-2: case-only differences are accepted when collisions are allowed; distinct names never collide", () => {
    const tree = new ArchiveTreePolicy(LENIENT);
    expect(
      addAll(tree, [
        ["README", "file"],
        ["readme", "file"],
        ["docs/A", "file"],
        ["docs/a", "file"],
      ]),
    ).toEqual([undefined, undefined, undefined, undefined]);
    const strict = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(strict, [
        ["a", "file"],
        ["b", "file"],
        ["dir/a", "file"],
        ["dir/b", "file"],
      ]),
    ).toEqual([undefined, undefined, undefined, undefined]);
  });
});

describe("ArchiveTreePolicy.finish: where links lead", () => {
  it("R-UA-2: files and directories alone resolve to nothing to report", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    addAll(tree, [
      ["a/", "directory"],
      ["a/b", "file"],
      ["c", "file"],
    ]);
    expect(await tree.finish()).toEqual([]);
  });

  it("R-UA-2: a regular file whose header carries a link name is a file, never resolved as a link", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(tree.add("f", ["f"], "file", "../../etc")).toBeUndefined();
    expect(tree.add("d/", ["d"], "directory", "/abs")).toBeUndefined();
    // Nor can another link lead through it as if it were one.
    expect(tree.add("via", ["via"], "symlink", "f/x")).toBeUndefined();
    expect(await tree.finish()).toEqual([]);
  });

  it("R-UA-2: a link is resolved by default (the resolve flag defaults to true)", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(tree.add("up", ["up"], "symlink", "../outside")).toBeUndefined();
    expect(await tree.finish()).toEqual([
      v("symlink_escape", "up", "symbolic link resolves outside the workspace"),
    ]);
  });

  it("R-UA-2: an absolute link target given to the tree is an escape", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(tree.add("abs", ["abs"], "symlink", "/etc")).toBeUndefined();
    expect(await tree.finish()).toEqual([
      v("symlink_escape", "abs", "symbolic link resolves outside the workspace"),
    ]);
  });

  it("R-UA-2: a link already refused (resolve: false) is not reported again, but a link through it escapes", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["abs", "symlink", "/etc", false],
        ["via", "symlink", "abs/passwd"],
      ]),
    ).toEqual([undefined, undefined]);
    expect(await tree.finish()).toEqual([
      v("symlink_escape", "via", "symbolic link resolves outside the workspace"),
    ]);
  });

  it("R-UA-2: links inside the workspace pass, also through other links of the archive", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    addAll(tree, [
      ["d/", "directory"],
      ["d/f", "file"],
      ["to-d", "symlink", "d"],
      ["d/back", "symlink", "../to-d/f"],
      ["e/deep", "symlink", "../d/./f"],
    ]);
    expect(await tree.finish()).toEqual([]);
  });

  it("R-UA-2: a loop of links is reported as a loop", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    addAll(tree, [
      ["a", "symlink", "b"],
      ["b", "symlink", "a"],
    ]);
    expect(await tree.finish()).toEqual([
      v("symlink_loop", "a", "symbolic link does not resolve (too many levels of links)"),
      v("symlink_loop", "b", "symbolic link does not resolve (too many levels of links)"),
    ]);
  });

  it("R-UA-2: a link that climbs out through another link's target escapes", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    addAll(tree, [
      ["d/", "directory"],
      ["d/up", "symlink", ".."],
      ["d/out", "symlink", "up/../.."],
    ]);
    expect(await tree.finish()).toEqual([
      v("symlink_escape", "d/out", "symbolic link resolves outside the workspace"),
    ]);
  });

  it("R-UA-2: a host that folds case follows a differently cased name into a link (collisions refused)", async () => {
    const tree = new ArchiveTreePolicy(STRICT);
    addAll(tree, [
      ["d/", "directory"],
      ["d/esc", "symlink", "../.."],
      ["x", "symlink", "D/ESC/etc"],
    ]);
    expect(await tree.finish()).toEqual([
      v("symlink_escape", "d/esc", "symbolic link resolves outside the workspace"),
      v("symlink_escape", "x", "symbolic link resolves outside the workspace"),
    ]);
  });

  it("R-UA-2: with case collisions allowed, a differently cased name is another file", async () => {
    const tree = new ArchiveTreePolicy(LENIENT);
    addAll(tree, [
      ["d/", "directory"],
      ["d/esc", "symlink", "../.."],
      ["x", "symlink", "D/ESC/etc"],
    ]);
    expect(await tree.finish()).toEqual([
      v("symlink_escape", "d/esc", "symbolic link resolves outside the workspace"),
    ]);
  });

  it("R-UA-2: a link named in NFD is found from an NFC path (both modes)", async () => {
    for (const limits of [STRICT, LENIENT]) {
      const tree = new ArchiveTreePolicy(limits);
      addAll(tree, [
        ["cafe\u0301", "symlink", ".."],
        ["x", "symlink", "caf\u00e9/etc"],
      ]);
      expect(await tree.finish()).toEqual([
        v("symlink_escape", "cafe\u0301", "symbolic link resolves outside the workspace"),
        v("symlink_escape", "x", "symbolic link resolves outside the workspace"),
      ]);
    }
  });

  it("R-UA-4: a refusal shows the archive-relative path only (no leading slash)", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(tree.add("/f", ["f"], "file")).toBeUndefined();
    expect(tree.add("/f/x", ["f", "x"], "file")).toEqual(
      v("type_conflict", "f/x", "a parent of this entry is a regular file"),
    );
  });
});

describe("ArchiveTreePolicy collision indexes (only keys unlike their own NFC form or fold are stored)", () => {
  it("R-UA-2: a name that is its own NFC form and fold, added first, still collides with a later variant", () => {
    const tree = new ArchiveTreePolicy(STRICT);
    expect(
      addAll(tree, [
        ["readme", "file"],
        ["README", "file"],
        ["caf\u00e9/a", "file"],
        ["cafe\u0301/b", "file"],
        ["CAF\u00c9/c", "file"],
        ["\u03c3.txt", "file"],
        ["\u03c2.txt", "file"],
      ]),
    ).toEqual([
      undefined,
      v("case_collision", "README", "two paths differ only by letter case"),
      undefined,
      v("normalization_collision", "cafe\u0301/b", "two paths differ only by Unicode normalization (NFC/NFD)"),
      v("case_collision", "CAF\u00c9/c", "two paths differ only by letter case"),
      undefined,
      v("case_collision", "\u03c2.txt", "two paths differ only by letter case"),
    ]);
  });

  it("R-UA-2: every sequence of names decides exactly as maps holding every key would", () => {
    // The policy as it was with full maps (every key's NFC form, every NFC form's fold), for
    // single-component names: the collision verdicts must match entry by entry.
    const reference = (strict: boolean) => {
      const keys = new Set<string>();
      const byNfc = new Map<string, string>();
      const byFold = new Map<string, string>();
      return (key: string): string | undefined => {
        if (keys.has(key)) return "duplicate_entry";
        const nfc = key.normalize("NFC");
        const sameNfc = byNfc.get(nfc);
        if (sameNfc !== undefined && sameNfc !== key) return "normalization_collision";
        if (strict) {
          const fold = foldKey(nfc);
          const sameFold = byFold.get(fold);
          if (sameFold !== undefined && sameFold !== nfc) return "case_collision";
          byFold.set(fold, nfc);
        }
        byNfc.set(nfc, key);
        keys.add(key);
        return undefined;
      };
    };
    const letters = ["a", "A", "\u00e9", "e\u0301", "\u00c9", "E\u0301", "\u03c3", "\u03c2", "\u03a3", "\u1e9e", "\u00df", "ss", "\u212b", "\u00c5", "\u00e5"];
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (const strict of [true, false]) {
      for (let round = 0; round < 200; round++) {
        const tree = new ArchiveTreePolicy(strict ? STRICT : LENIENT);
        const model = reference(strict);
        for (let i = 0; i < 12; i++) {
          const length = 1 + Math.floor(next() * 2);
          let name = "";
          for (let j = 0; j < length; j++) name += letters[Math.floor(next() * letters.length)];
          expect([name, tree.add(name, [name], "file")?.code]).toEqual([name, model(name)]);
        }
      }
    }
  });
});
