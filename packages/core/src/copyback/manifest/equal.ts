// Entry equality: the one definition of "unchanged" used by the no-delta check (R-LK-6) and by
// the three-way merge. Path, type, mode, content hash and link target must all match.
import type { Manifest, ManifestEntry } from "./types";

/**
 * `undefined` means "absent"; two absent entries are equal. Symlink modes are ignored: Linux
 * cannot set them (lchmod does not exist) and always reports 0o777, so they carry no meaning.
 * For files a known size mismatch decides without hashes (the host probe hashes only when sizes
 * could match); otherwise both sha256 values must be present and equal.
 */
export function entriesEqual(a: ManifestEntry | undefined, b: ManifestEntry | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.type !== b.type) return false;
  switch (a.type) {
    case "directory":
      return a.mode === b.mode;
    case "symlink":
      return a.target === b.target;
    case "file":
      if (a.mode !== b.mode) return false;
      if (a.size !== undefined && b.size !== undefined && a.size !== b.size) return false;
      return a.sha256 !== undefined && a.sha256 === b.sha256;
  }
}

export function manifestsEqual(a: Manifest, b: Manifest): boolean {
  if (a.entries.length !== b.entries.length) return false;
  // Both sorted without duplicates (every parsed manifest is): one lockstep pass, no index.
  if (isSortedUnique(a.entries) && isSortedUnique(b.entries)) {
    for (let i = 0; i < a.entries.length; i++) {
      const x = a.entries[i] as ManifestEntry;
      const y = b.entries[i] as ManifestEntry;
      if (x.path !== y.path || !entriesEqual(x, y)) return false;
    }
    return true;
  }
  const byPath = new Map(a.entries.map((entry) => [entry.path, entry]));
  if (byPath.size !== a.entries.length) return false;
  for (const entry of b.entries) {
    if (!entriesEqual(byPath.get(entry.path), entry)) return false;
    byPath.delete(entry.path);
  }
  return byPath.size === 0;
}

/** Strictly increasing paths (plain code-unit order): sorted, and no path twice. */
export function isSortedUnique(entries: readonly ManifestEntry[]): boolean {
  for (let i = 1; i < entries.length; i++) {
    if ((entries[i - 1] as ManifestEntry).path >= (entries[i] as ManifestEntry).path) return false;
  }
  return true;
}

export function indexManifest(manifest: Manifest): Map<string, ManifestEntry> {
  return new Map(manifest.entries.map((entry) => [entry.path, entry]));
}
