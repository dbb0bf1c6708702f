// Delta copyback: the sandbox exports only what differs from the baseline, plus the complete
// snapshot manifest; the host validates and merges only the delta while the merge still sees
// every returned path, type, hash, mode and link target (R-LK-6).
import type { Manifest } from "../manifest/types";

/**
 * What the sandbox side remembers about a file whose hash it already knows. If all of these
 * are unchanged the contents are taken as unchanged, as git's index does: writing a file
 * changes its ctime, and ctime cannot be set back from user space (utimes sets it to now).
 * Times are lstat's millisecond values (sub-microsecond resolution): only entries older than
 * the racy window are cached (scan.ts), so any later write moves ctime by whole seconds.
 */
export interface CachedFileStat {
  size: number;
  mode: number;
  ino: number;
  mtimeMs: number;
  ctimeMs: number;
  sha256: string;
}

/** Sandbox-side state kept between seeding and copyback (outside the workspace). */
export interface WorkspaceStatCache {
  version: 1;
  files: Record<string, CachedFileStat>;
}

export interface WorkspaceScan {
  manifest: Manifest;
  /** The cache to keep for the next scan. */
  cache: WorkspaceStatCache;
  /** Files whose contents were read and hashed (the rest came from the cache). */
  hashedFiles: number;
  /** Bytes read to hash them. */
  hashedBytes: number;
}

export interface DeltaExport {
  /** The complete snapshot manifest: sent to the host with the archive. */
  manifest: Manifest;
  /** Paths whose entry differs from the baseline and exists in the snapshot (in the archive). */
  changed: string[];
  /** Baseline paths absent from the snapshot (known to the host from the manifest). */
  removed: string[];
  /** Tar of the changed entries and their parent directories; null when nothing changed. */
  archive: NodeJS.ReadableStream | null;
  cache: WorkspaceStatCache;
  hashedFiles: number;
  hashedBytes: number;
}

export interface DeltaReceipt {
  /** The validated, complete snapshot manifest: pass it to mergeSnapshot as snapshotManifest. */
  snapshotManifest: Manifest;
  changed: string[];
  removed: string[];
}
