// The delta export's scan of a Daytona workspace, host side and pure: the sandbox lists every
// entry with `find -printf` (type, mode, size, inode, mtime, ctime, path, link target, NUL
// separated), the stat cache vouches for files whose stat did not move, the rest are hashed in
// the sandbox, and the result is the workspace's manifest in exactly takeManifest's form plus the
// cache to keep. The cache is an accelerator, never evidence: the host verifies every byte a
// delta carries (copyback/delta/receive.ts).
import { z } from "zod";
import { DomainError } from "../../errors";
import { comparePaths } from "../../copyback/manifest/paths";
import type { Manifest, ManifestEntry } from "../../copyback/manifest/types";

/** Entries changed less than this long before the scan began are not cached (racy, as scan.ts). */
export const RACY_WINDOW_SEC = 2;
const FIELDS = 8;

export interface ListedEntry {
  /** find's %y: f, d, l (anything else cannot be in a manifest). */
  type: string;
  mode: number;
  size: number;
  ino: string;
  mtime: string;
  ctime: string;
  path: string;
  target: string;
}

/** [size, mode, inode, mtime, ctime, sha256]: times as find printed them, compared as text. */
const record = z.tuple([z.number().int().min(0), z.number().int().min(0), z.string(), z.string(), z.string(), z.string().regex(/^[0-9a-f]{64}$/)]);
export const daytonaStatCache = z.strictObject({ version: z.literal(1), files: z.record(z.string().min(1), record) });
export type DaytonaStatCache = z.infer<typeof daytonaStatCache>;

/** Pure: the listing printed by listingScript, or a typed refusal (a malformed one is not a scan). */
export function parseListing(bytes: Buffer): ListedEntry[] {
  const fields = bytes.toString("utf8").split("\0");
  if (fields.pop() !== "" || fields.length % FIELDS !== 0) throw new DomainError("conflict", "provider_delta_mismatch", "The sandbox's listing of its workspace is malformed.");
  const entries: ListedEntry[] = [];
  for (let i = 0; i < fields.length; i += FIELDS) {
    const [type, mode, size, ino, mtime, ctime, path, target] = fields.slice(i, i + FIELDS) as [string, string, string, string, string, string, string, string];
    entries.push({ type, mode: parseInt(mode, 8) & 0o777, size: Number(size), ino, mtime, ctime, path, target });
  }
  return entries;
}

export interface ScanPlan {
  /** Paths of the files to hash in the sandbox, in order. */
  toHash: string[];
  finish(hashes: readonly string[]): { manifest: Manifest; cache: DaytonaStatCache; hashedFiles: number; hashedBytes: number };
}

/**
 * Pure: what to hash, given the listing, the previous cache and the sandbox's clock when the
 * listing began (seconds). `racyWindowSec` 0 only for the seed's scan (nothing writes then).
 */
export function planScan(listing: readonly ListedEntry[], cache: DaytonaStatCache | undefined, scanStartSec: number, racyWindowSec = RACY_WINDOW_SEC): ScanPlan {
  const previous = cache?.files ?? {};
  const entries: ManifestEntry[] = [];
  const pending: ListedEntry[] = [];
  const files: DaytonaStatCache["files"] = {};
  const cacheable = (e: ListedEntry) => Number(e.ctime) < scanStartSec - racyWindowSec && Number(e.mtime) < scanStartSec - racyWindowSec;
  for (const entry of listing) {
    if (entry.type === "d") entries.push({ path: entry.path, type: "directory", mode: entry.mode });
    else if (entry.type === "l") entries.push({ path: entry.path, type: "symlink", mode: 0o777, target: entry.target });
    else if (entry.type === "f") {
      const known = previous[entry.path];
      if (known && known[0] === entry.size && known[1] === entry.mode && known[2] === entry.ino && known[3] === entry.mtime && known[4] === entry.ctime) {
        entries.push({ path: entry.path, type: "file", mode: entry.mode, sha256: known[5], size: entry.size });
        files[entry.path] = known;
      } else pending.push(entry);
    } else {
      // A fifo, socket or device: no manifest can hold it; the full export (and its validation) decides.
      throw new DomainError("invalid", "delta_unsupported_entry", "The workspace holds an entry that is neither a file, a directory nor a link.");
    }
  }
  return {
    toHash: pending.map((e) => e.path),
    finish(hashes) {
      if (hashes.length !== pending.length) throw new DomainError("conflict", "provider_delta_mismatch", "The sandbox hashed another set of files than it listed.");
      let hashedBytes = 0;
      pending.forEach((entry, i) => {
        const sha256 = hashes[i] as string;
        hashedBytes += entry.size;
        entries.push({ path: entry.path, type: "file", mode: entry.mode, sha256, size: entry.size });
        if (cacheable(entry)) files[entry.path] = [entry.size, entry.mode, entry.ino, entry.mtime, entry.ctime, sha256];
      });
      entries.sort((a, b) => comparePaths(a.path, b.path));
      return { manifest: { version: 1, entries }, cache: { version: 1, files }, hashedFiles: pending.length, hashedBytes };
    },
  };
}

/** Pure: sha256sum's lines, in order (a name with a newline or backslash is escaped with a leading "\"). */
export function parseHashes(output: string): string[] {
  const hashes: string[] = [];
  for (const line of output.split("\n")) {
    if (line === "") continue;
    const hash = (line.startsWith("\\") ? line.slice(1) : line).slice(0, 64);
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new DomainError("conflict", "provider_delta_mismatch", "The sandbox's hashes are malformed.");
    hashes.push(hash);
  }
  return hashes;
}

/** Pure: find's arguments that leave copyback's exclusions out (glob characters escaped: no wildcards). */
export function findPruneArgs(patterns: readonly string[] | undefined): string[] {
  const names: string[] = [];
  const paths: string[] = [];
  for (const raw of patterns ?? []) {
    const pattern = raw.replace(/^\.\//, "").replace(/\/+$/, "").replace(/[*?[\]\\]/g, "\\$&");
    if (pattern.includes("/") || raw.startsWith("./")) paths.push(`./${pattern}`);
    else names.push(pattern);
  }
  const tests = [...names.map((n) => ["-name", n]), ...paths.map((p) => ["-path", p])];
  if (tests.length === 0) return [];
  const joined = tests.flatMap((t, i) => (i === 0 ? t : ["-o", ...t]));
  return ["(", ...joined, ")", "-prune", "-o"];
}
