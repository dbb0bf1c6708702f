// The fast paths of one parse per copyback: a parsed manifest is frozen and not checked again,
// and sorted manifests are compared, diffed and indexed without building maps. Each fast path
// must give exactly what the general (map-based) definition gives.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { diffManifests } from "../../src/copyback/delta/diff";
import { entriesEqual, isSortedUnique, manifestsEqual } from "../../src/copyback/manifest/equal";
import { isValidatedManifest, parseManifest } from "../../src/copyback/manifest/parse";
import { comparePaths, isSafeRelativePath } from "../../src/copyback/manifest/paths";
import { pathIndex, SortedEntryIndex } from "../../src/copyback/manifest/sorted-index";
import type { Manifest, ManifestEntry } from "../../src/copyback/manifest/types";
import { sandboxChanges } from "../../src/copyback/merge/plan";

const H = (c: string) => c.repeat(64);

/** Valid manifests over a small name space, so that two of them share and differ in paths. */
const segment = fc.constantFrom("a", "b", "a.b", "a-b", "c0", "é");
const leaf = fc.record({
  path: fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => s.join("/")),
  kind: fc.constantFrom("file", "symlink", "directory"),
  version: fc.constantFrom("1", "2"),
  mode: fc.constantFrom(0o644, 0o755),
});
const manifestArb = fc.array(leaf, { maxLength: 12 }).map((leaves): Manifest => {
  const byPath = new Map<string, ManifestEntry>();
  for (const l of leaves) {
    const parts = l.path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const p = parts.slice(0, i).join("/");
      byPath.set(p, { path: p, type: "directory", mode: 0o755 });
    }
    if (byPath.get(l.path)?.type === "directory") continue;
    const entry: ManifestEntry =
      l.kind === "file"
        ? { path: l.path, type: "file", mode: l.mode, sha256: H(l.version), size: 1 }
        : l.kind === "symlink"
          ? { path: l.path, type: "symlink", mode: 0o777, target: `t${l.version}` }
          : { path: l.path, type: "directory", mode: l.mode };
    byPath.set(l.path, entry);
  }
  // A later leaf may have turned an earlier file into a directory: keep only parents that are.
  const entries = [...byPath.values()].filter((e) =>
    e.path
      .split("/")
      .slice(0, -1)
      .every((_, i, parts) => byPath.get(parts.slice(0, i + 1).join("/"))?.type === "directory"),
  );
  return { version: 1, entries: entries.sort((x, y) => comparePaths(x.path, y.path)) };
});
const copy = (m: Manifest): Manifest => JSON.parse(JSON.stringify(m)) as Manifest;
const shuffled = (m: Manifest, seed: number): Manifest => {
  const entries = [...m.entries];
  for (let i = entries.length - 1; i > 0; i--) {
    const j = (seed * (i + 7)) % (i + 1);
    [entries[i], entries[j]] = [entries[j] as ManifestEntry, entries[i] as ManifestEntry];
  }
  return { version: 1, entries };
};

// The general definitions (what the code did before the fast paths).
function referenceEqual(a: Manifest, b: Manifest): boolean {
  const byPath = new Map(a.entries.map((e) => [e.path, e]));
  if (byPath.size !== a.entries.length || a.entries.length !== b.entries.length) return false;
  return b.entries.every((e) => entriesEqual(byPath.get(e.path), e));
}
function referenceDiff(baseline: Manifest, snapshot: Manifest) {
  const base = new Map(baseline.entries.map((e) => [e.path, e]));
  const seen = new Set(snapshot.entries.map((e) => e.path));
  return {
    changed: snapshot.entries
      .filter((e) => !entriesEqual(base.get(e.path), e))
      .sort((x, y) => comparePaths(x.path, y.path)),
    removed: baseline.entries
      .filter((e) => !seen.has(e.path))
      .map((e) => e.path)
      .sort(comparePaths),
  };
}
function referenceSafe(path: string): boolean {
  if (path === "" || path.startsWith("/") || path.endsWith("/") || path.includes("\0"))
    return false;
  return path.split("/").every((s) => s !== "" && s !== "." && s !== "..");
}

describe("parseManifest: one check per manifest", () => {
  const stored = {
    version: 1,
    entries: [
      { path: "src", type: "directory", mode: 0o755 },
      { path: "src/a.ts", type: "file", mode: 0o644, sha256: H("a"), size: 3 },
    ],
  };

  it("R-LK-6: returns a frozen manifest and hands that same manifest back without a second check", () => {
    const parsed = parseManifest(JSON.parse(JSON.stringify(stored)));
    expect(isValidatedManifest(parsed)).toBe(true);
    expect(Object.isFrozen(parsed)).toBe(true);
    expect(Object.isFrozen(parsed.entries)).toBe(true);
    expect(parsed.entries.every((e) => Object.isFrozen(e))).toBe(true);
    expect(parseManifest(parsed)).toBe(parsed);
  });

  it("R-LK-6: what was checked cannot change afterwards (no entry added, no hash or mode edited)", () => {
    const parsed = parseManifest(JSON.parse(JSON.stringify(stored)));
    expect(() => parsed.entries.push({ path: "x", type: "directory", mode: 0o755 })).toThrow(
      TypeError,
    );
    expect(() => {
      (parsed.entries[1] as ManifestEntry).sha256 = H("b");
    }).toThrow(TypeError);
    expect(() => {
      (parsed.entries[0] as ManifestEntry).mode = 0o777;
    }).toThrow(TypeError);
    expect(parsed.entries[1]?.sha256).toBe(H("a"));
  });

  it("checks a copy of a parsed manifest in full: an invalid copy is refused with a clear error", () => {
    const parsed = parseManifest(JSON.parse(JSON.stringify(stored)));
    const tampered = copy(parsed);
    tampered.entries.push({ path: "src/../../etc", type: "directory", mode: 0o755 });
    expect(isValidatedManifest(tampered)).toBe(false);
    expect(() => parseManifest(tampered)).toThrow(
      expect.objectContaining({ code: "invalid_manifest", relativePath: "src/../../etc" }),
    );
    // The parsed manifest it was copied from is untouched.
    expect(parsed.entries.map((e) => e.path)).toEqual(["src", "src/a.ts"]);
  });

  it("accepts unsorted input, returns it sorted, and still finds a duplicate out of order", () => {
    const reversed = { version: 1, entries: [...stored.entries].reverse() };
    expect(parseManifest(reversed).entries.map((e) => e.path)).toEqual(["src", "src/a.ts"]);
    const twice = {
      version: 1,
      entries: [stored.entries[1], stored.entries[0], stored.entries[1]],
    };
    expect(() => parseManifest(twice)).toThrow(
      expect.objectContaining({ code: "invalid_manifest" }),
    );
  });

  it("accepts every generated valid manifest, in any order, as the same sorted manifest", () => {
    fc.assert(
      fc.property(manifestArb, fc.nat(), (m, seed) => {
        const parsed = parseManifest(copy(shuffled(m, seed)));
        expect(parsed.entries).toEqual(m.entries);
        expect(isSortedUnique(parsed.entries)).toBe(true);
      }),
    );
  });
});

describe("sorted fast paths agree with the general definitions", () => {
  it("isSafeRelativePath (one pass) equals the segment-split definition", () => {
    const text = fc
      .array(fc.constantFrom("a", ".", "/", "\0", "é", ".."), { maxLength: 8 })
      .map((parts) => parts.join(""));
    fc.assert(
      fc.property(text, (p) => {
        expect(isSafeRelativePath(p)).toBe(referenceSafe(p));
      }),
    );
  });

  it("R-LK-6: manifestsEqual in lockstep (sorted) and by map (shuffled) give the reference answer", () => {
    fc.assert(
      fc.property(manifestArb, manifestArb, fc.nat(), (a, b, seed) => {
        const want = referenceEqual(a, b);
        expect(manifestsEqual(a, b)).toBe(want);
        expect(manifestsEqual(shuffled(a, seed), b)).toBe(want);
        expect(manifestsEqual(a, copy(a))).toBe(true);
      }),
    );
  });

  it("diffManifests in lockstep (sorted) and by map (shuffled) give the reference delta", () => {
    fc.assert(
      fc.property(manifestArb, manifestArb, fc.nat(), (baseline, snapshot, seed) => {
        const want = referenceDiff(baseline, snapshot);
        expect(diffManifests(baseline, snapshot)).toEqual(want);
        expect(diffManifests(shuffled(baseline, seed), snapshot)).toEqual(want);
      }),
    );
  });

  it("the binary-search index answers like a Map, and the merge's changed paths are the same", () => {
    fc.assert(
      fc.property(manifestArb, manifestArb, (baseline, snapshot) => {
        const sorted = pathIndex(baseline);
        expect(sorted).toBeInstanceOf(SortedEntryIndex);
        const map = new Map(baseline.entries.map((e) => [e.path, e]));
        for (const probe of [...snapshot.entries, ...baseline.entries].map((e) => e.path)) {
          expect(sorted.get(probe)).toBe(map.get(probe));
          expect(sorted.has(probe)).toBe(map.has(probe));
        }
        expect(sorted.get("zz-not-there")).toBeUndefined();
        expect([...sorted]).toEqual([...map]);
        expect([...sorted.keys()]).toEqual([...map.keys()]);
        expect(sorted.size).toBe(map.size);
        const maps = sandboxChanges(map, new Map(snapshot.entries.map((e) => [e.path, e])));
        expect(sandboxChanges(sorted, pathIndex(snapshot))).toEqual(maps);
      }),
    );
  });

  it("an unsorted manifest is indexed by a Map (the binary search needs order)", () => {
    const m: Manifest = {
      version: 1,
      entries: [
        { path: "b", type: "directory", mode: 0o755 },
        { path: "a", type: "directory", mode: 0o755 },
      ],
    };
    expect(pathIndex(m)).toBeInstanceOf(Map);
    expect(pathIndex(m).get("a")?.path).toBe("a");
  });
});
