// The stat cache's file format (pure: bytes <-> WorkspaceStatCache). Binary, because the delta
// export reads it on every copyback and JSON cost about 18 ms for 10,000 files (an
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
const STATS_PER_RECORD = 5;
const STAT_BYTES = STATS_PER_RECORD * 8;
const HASH_BYTES = 32;
const HEX_DIGITS = /^[0-9a-f]*$/;

// Whole regions at once (one typed array, one hex conversion), not a call per field: the cache
// is read once per copyback, often by a process that has not run this code yet.
const littleEndian = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;

export function encodeStatCache(cache: WorkspaceStatCache): Buffer {
  const paths = Object.keys(cache.files);
  const n = paths.length;
  const stats = new Float64Array(n * STATS_PER_RECORD);
  let hex = "";
  for (let i = 0; i < n; i++) {
    const record = cache.files[paths[i] as string] as CachedFileStat;
    // Never written from anything else than a scan's records, but a hash that is not 64 hex
    // digits would be written as other bytes: refuse it instead of caching a wrong value.
    if (typeof record.sha256 !== "string" || record.sha256.length !== 64) throw new Error("a stat cache record without a sha256");
    const at = i * STATS_PER_RECORD;
    stats[at] = record.size;
    stats[at + 1] = record.mode;
    stats[at + 2] = record.ino;
    stats[at + 3] = record.mtimeMs;
    stats[at + 4] = record.ctimeMs;
    hex += record.sha256;
  }
  if (!HEX_DIGITS.test(hex)) throw new Error("a stat cache record without a sha256");
  const names = Buffer.from(n === 0 ? "" : `${paths.join("\0")}\0`, "utf8");
  const hashes = HEADER_BYTES + n * STAT_BYTES;
  const out = Buffer.allocUnsafe(hashes + n * HASH_BYTES + names.length);
  out.writeUInt32LE(MAGIC, 0);
  out.writeUInt32LE(FORMAT_VERSION, 4);
  out.writeUInt32LE(n, 8);
  out.writeUInt32LE(names.length, 12);
  const statBytes = Buffer.from(stats.buffer, stats.byteOffset, stats.byteLength);
  if (!littleEndian) statBytes.swap64();
  statBytes.copy(out, HEADER_BYTES);
  out.write(hex, hashes, n * HASH_BYTES, "hex");
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
  // A copy: aligned for the typed array whatever the buffer's offset, and in this machine's order.
  const stats = new Float64Array(n * STATS_PER_RECORD);
  const statBytes = Buffer.from(stats.buffer);
  bytes.copy(statBytes, 0, HEADER_BYTES, hashes);
  if (!littleEndian) statBytes.swap64();
  const hex = bytes.toString("hex", hashes, names);
  const files: Record<string, CachedFileStat> = Object.create(null) as Record<string, CachedFileStat>;
  for (let i = 0; i < n; i++) {
    const path = paths[i] as string;
    if (path === "" || path in files) return undefined;
    const at = i * STATS_PER_RECORD;
    files[path] = {
      size: stats[at] as number,
      mode: stats[at + 1] as number,
      ino: stats[at + 2] as number,
      mtimeMs: stats[at + 3] as number,
      ctimeMs: stats[at + 4] as number,
      sha256: hex.slice(i * 64, i * 64 + 64),
    };
  }
  return { version: 1, files };
}
