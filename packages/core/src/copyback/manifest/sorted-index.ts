// A path index of a manifest whose entries are sorted without duplicates (every parsed or
// scanned manifest): lookups by binary search over the entry array itself. Building a Map of
// 10,000 paths costs more than all the lookups a merge makes, so the merge indexes its two
// manifests this way (pathIndex) and keeps the Map only for unsorted input.
import { indexManifest, isSortedUnique } from "./equal";
import type { Manifest, ManifestEntry } from "./types";

export class SortedEntryIndex implements ReadonlyMap<string, ManifestEntry> {
  /** `entries` must be sorted by path (code-unit order) without duplicates (isSortedUnique). */
  constructor(readonly sorted: readonly ManifestEntry[]) {}

  get size(): number {
    return this.sorted.length;
  }

  get(path: string): ManifestEntry | undefined {
    let lo = 0;
    let hi = this.sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const entry = this.sorted[mid] as ManifestEntry;
      if (entry.path === path) return entry;
      if (entry.path < path) lo = mid + 1;
      else hi = mid - 1;
    }
    return undefined;
  }

  has(path: string): boolean {
    return this.get(path) !== undefined;
  }

  forEach(
    callback: (value: ManifestEntry, key: string, map: ReadonlyMap<string, ManifestEntry>) => void,
    thisArg?: unknown,
  ): void {
    for (const entry of this.sorted) callback.call(thisArg, entry, entry.path, this);
  }

  *entries(): MapIterator<[string, ManifestEntry]> {
    for (const entry of this.sorted) yield [entry.path, entry];
  }

  *keys(): MapIterator<string> {
    for (const entry of this.sorted) yield entry.path;
  }

  *values(): MapIterator<ManifestEntry> {
    yield* this.sorted;
  }

  [Symbol.iterator](): MapIterator<[string, ManifestEntry]> {
    return this.entries();
  }
}

/** The cheapest correct index of a manifest: by binary search when sorted, else a Map. */
export function pathIndex(manifest: Manifest): ReadonlyMap<string, ManifestEntry> {
  return isSortedUnique(manifest.entries)
    ? new SortedEntryIndex(manifest.entries)
    : indexManifest(manifest);
}
