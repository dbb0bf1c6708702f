// The stat cache's file format (pure: bytes <-> WorkspaceStatCache). Binary, because the delta
// export reads it on every copyback and JSON cost about 18 ms for 10,000 files (issue 14: an
// unchanged copyback should cost little): parsing, then checking each record's hash with a
// regular expression. Here the numbers are read in place and the hashes are raw bytes, so a
// decoded file can hold no malformed hash, and a number that is not one (NaN) matches no lstat:
// that file is just hashed again. Only the framing needs checking.
//
//   offset 0   "CBSC" (magic), u32 format version (2), u32 record count n, u32 path bytes p
//   offset 16  n x 5 float64: size, mode, ino, mtimeMs, ctimeMs
//   then       n x 32 bytes: sha256
//   then       p bytes: the n workspace-relative paths, UTF-8, each followed by a NUL
//
// A path cannot contain NUL (POSIX), so the separator is unambiguous. Little-endian throughout.
import type { CachedFileStat, WorkspaceStatCache } from "../../copyback/delta/types";

const MAGIC = 0x43534243; // "CBSC" read as a little-endian u32
const FORMAT_VERSION = 2;
const HEADER_BYTES = 16;
const STAT_BYTES = 5 * 8;
const HASH_BYTES = 32;
const SHA256_HEX = /^[0-9a-f]{64}$/;

export function encodeStatCache(cache: WorkspaceStatCache): Buffer {
  const paths = Object.keys(cache.files);
  const names = Buffer.from(paths.length === 0 ? "" : `${paths.join("\0")}\0`, "utf8");
  const n = paths.length;
  const out = Buffer.allocUnsafe(HEADER_BYTES + n * (STAT_BYTES + HASH_BYTES) + names.length);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(FORMAT_VERSION, 4);
  out.writeUInt32LE(n, 8);
  out.writeUInt32LE(names.length, 12);
  const hashes = HEADER_BYTES + n * STAT_BYTES;
  for (let i = 0; i < n; i++) {
    const record = cache.files[paths[i] as string] as CachedFileStat;
    // Never written from anything else than a scan's records, but a hash that is not 64 hex
    // digits would be written as other bytes: refuse it instead of caching a wrong value.
    if (!SHA256_HEX.test(record.sha256)) throw new Error("a stat cache record without a sha256");
    const at = HEADER_BYTES + i * STAT_BYTES;
    out.writeDoubleLE(record.size, at);
    out.writeDoubleLE(record.mode, at + 8);
    out.writeDoubleLE(record.ino, at + 16);
    out.writeDoubleLE(record.mtimeMs, at + 24);
    out.writeDoubleLE(record.ctimeMs, at + 32);
    out.write(record.sha256, hashes + i * HASH_BYTES, HASH_BYTES, "hex");
  }
  names.copy(out, hashes + n * HASH_BYTES);
  return out;
}

/** The cache in `bytes`, or undefined when they are not a whole cache of this format. */
export function decodeStatCache(bytes: Buffer): WorkspaceStatCache | undefined {
  if (bytes.length < HEADER_BYTES) return undefined;
  if (bytes.readUInt32LE(0) !== MAGIC || bytes.readUInt32LE(4) !== FORMAT_VERSION) return undefined;
  const n = bytes.readUInt32LE(8);
  const nameBytes = bytes.readUInt32LE(12);
  const hashes = HEADER_BYTES + n * STAT_BYTES;
  const names = hashes + n * HASH_BYTES;
  if (bytes.length !== names + nameBytes) return undefined;
  const paths = n === 0 ? [] : bytes.toString("utf8", names, names + nameBytes).split("\0");
  // n paths, each ended by a NUL: n + 1 pieces, the last one empty.
  if (n > 0 && (paths.length !== n + 1 || paths[n] !== "")) return undefined;
  const files: Record<string, CachedFileStat> = Object.create(null) as Record<string, CachedFileStat>;
  for (let i = 0; i < n; i++) {
    const path = paths[i] as string;
    if (path === "" || path in files) return undefined;
    const at = HEADER_BYTES + i * STAT_BYTES;
    files[path] = {
      size: bytes.readDoubleLE(at),
      mode: bytes.readDoubleLE(at + 8),
      ino: bytes.readDoubleLE(at + 16),
      mtimeMs: bytes.readDoubleLE(at + 24),
      ctimeMs: bytes.readDoubleLE(at + 32),
      sha256: bytes.toString("hex", hashes + i * HASH_BYTES, hashes + (i + 1) * HASH_BYTES),
    };
  }
  return { version: 1, files };
}
