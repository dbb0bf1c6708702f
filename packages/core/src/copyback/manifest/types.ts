// The manifest of a workspace directory. It is stored in the database as the merge baseline
// when a sandbox is seeded, so it must stay plain JSON: no Maps, no Buffers, no bigint.

export type ManifestEntryType = "file" | "directory" | "symlink";

export interface ManifestEntry {
  /** POSIX path relative to the manifest root, no leading "./", no trailing "/". */
  path: string;
  type: ManifestEntryType;
  /** Permission bits only (st_mode & 0o777); setuid/setgid/sticky are not carried. */
  mode: number;
  /** Lowercase hex SHA-256 of the contents (files only). */
  sha256?: string;
  /** Size in bytes (files only). */
  size?: number;
  /** The link text exactly as readlink returns it (symlinks only); never resolved. */
  target?: string;
}

export interface Manifest {
  version: 1;
  /** Sorted by path (plain code-unit order), one entry per path, every parent directory present. */
  entries: ManifestEntry[];
}

export interface TakeManifestOptions {
  /** Excluded trees (see exclude.ts): never listed, never descended into. */
  exclude?: readonly string[];
  /** Files hashed (and inodes stat'ed) at once; default 16. */
  concurrency?: number;
}
