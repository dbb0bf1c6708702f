// Resource limits for archive validation (R-UA-2). Every limit is checked while the archive is
// read, so a hostile archive is refused as soon as it crosses one, never after it was inflated.

export interface ArchiveLimits {
  /** File system entries (files, directories, links); extension headers are not counted. */
  maxEntries: number;
  /** Sum of the regular files' sizes. */
  maxTotalBytes: number;
  /** Largest single regular file. */
  maxEntryBytes: number;
  /** Most path components in one entry path. */
  maxPathDepth: number;
  /** Longest entry path or link target, in UTF-8 bytes. */
  maxPathBytes: number;
  /** Longest single path component, in UTF-8 bytes. */
  maxComponentBytes: number;
  /** Gzip input: inflated bytes per compressed byte read so far; above it the read is aborted. */
  maxCompressionRatio: number;
  /**
   * The ratio is only enforced once this many bytes were inflated: a tiny archive (one empty
   * file and its zero padding) legitimately compresses far better than 200:1.
   */
  compressionRatioGraceBytes: number;
  /** Sum of all extension-header bodies (pax, GNU long names); each one is also capped at 1 MiB. */
  maxMetadataBytes: number;
  /** Reject two paths that differ only by letter case (they collide on case-insensitive hosts). */
  rejectCaseCollisions: boolean;
}

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

export const DEFAULT_ARCHIVE_LIMITS: Readonly<ArchiveLimits> = Object.freeze({
  maxEntries: 200_000,
  maxTotalBytes: 20 * GiB,
  maxEntryBytes: 5 * GiB,
  maxPathDepth: 64,
  maxPathBytes: 4096,
  maxComponentBytes: 255,
  maxCompressionRatio: 200,
  compressionRatioGraceBytes: 1 * MiB,
  maxMetadataBytes: 64 * MiB,
  rejectCaseCollisions: true,
});

/** node-tar ignores extension headers above this size; the walker refuses them instead. */
export const MAX_EXTENSION_HEADER_BYTES = 1 * MiB;

export function resolveLimits(overrides?: Partial<ArchiveLimits>): ArchiveLimits {
  const limits: ArchiveLimits = { ...DEFAULT_ARCHIVE_LIMITS };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (value === undefined) continue;
    if (!(key in DEFAULT_ARCHIVE_LIMITS)) throw new TypeError(`unknown archive limit: ${key}`);
    const k = key as keyof ArchiveLimits;
    if (k === "rejectCaseCollisions") {
      if (typeof value !== "boolean") throw new TypeError(`archive limit ${k} must be a boolean`);
      limits[k] = value;
    } else {
      if (typeof value !== "number" || !(value > 0)) {
        throw new TypeError(`archive limit ${k} must be a positive number`);
      }
      limits[k] = value;
    }
  }
  return limits;
}
