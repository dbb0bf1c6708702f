// Pure: which entries of a snapshot differ from the baseline (entriesEqual, the one definition
// of "unchanged" that the merge uses too), and which directories a delta archive must carry so
// that every changed entry has its parents.
import { entriesEqual, indexManifest, isSortedUnique } from "../manifest/equal";
import { ancestorsOf, comparePaths } from "../manifest/paths";
import type { Manifest, ManifestEntry } from "../manifest/types";

export interface ManifestDelta {
  /** Snapshot entries that are new or differ from the baseline, sorted by path. */
  changed: ManifestEntry[];
  /** Baseline paths the snapshot no longer has, sorted. */
  removed: string[];
}

export function diffManifests(baseline: Manifest, snapshot: Manifest): ManifestDelta {
  if (isSortedUnique(baseline.entries) && isSortedUnique(snapshot.entries))
    return diffSorted(baseline.entries, snapshot.entries);
  const base = indexManifest(baseline);
  const changed: ManifestEntry[] = [];
  const seen = new Set<string>();
  for (const entry of snapshot.entries) {
    seen.add(entry.path);
    if (!entriesEqual(base.get(entry.path), entry)) changed.push(entry);
  }
  const removed = baseline.entries.filter((e) => !seen.has(e.path)).map((e) => e.path);
  return {
    changed: changed.sort((a, b) => comparePaths(a.path, b.path)),
    removed: removed.sort(comparePaths),
  };
}

/** Both sides sorted without duplicates (every parsed or scanned manifest): one merge pass. */
function diffSorted(base: readonly ManifestEntry[], snap: readonly ManifestEntry[]): ManifestDelta {
  const changed: ManifestEntry[] = [];
  const removed: string[] = [];
  let i = 0;
  let j = 0;
  while (i < base.length || j < snap.length) {
    const b = base[i];
    const s = snap[j];
    // Equal paths first: nearly every pair is, and one comparison of two long, equal strings
    // then decides instead of two ordering tests.
    if (b !== undefined && s !== undefined && b.path === s.path) {
      if (!entriesEqual(b, s)) changed.push(s);
      i++;
      j++;
    } else if (s === undefined || (b !== undefined && b.path < s.path)) {
      removed.push((b as ManifestEntry).path);
      i++;
    } else {
      changed.push(s);
      j++;
    }
  }
  return { changed, removed };
}

/** The changed entries and every ancestor directory of them, each directory before its contents. */
export function deltaArchivePaths(changed: readonly ManifestEntry[]): string[] {
  const paths = new Set<string>();
  for (const entry of changed) {
    paths.add(entry.path);
    for (const ancestor of ancestorsOf(entry.path)) paths.add(ancestor);
  }
  return [...paths].sort(comparePaths);
}
