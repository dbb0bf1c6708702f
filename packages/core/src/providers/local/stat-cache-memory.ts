// The stat caches this process wrote or read lately, by the file they are in and that file's
// identity (device, inode, size, mtime, ctime: a rewrite or a rename over it changes at least the
// ctime or the inode). The seed writes a sandbox's cache and the delta export reads it back a few
// seconds later in the same process; remembering the decoded records saves reading and decoding
// the file (6 to 9 ms of every small copyback at 10,000 files).
//
// Never trusted more than the file: a cache is an accelerator whose records are used only for a
// file whose lstat still matches (scan.ts), and the host verifies every byte the delta carries.
// An entry is handed out only while the file has exactly the identity it had when the entry was
// written or read, so a file rewritten by anyone else is read again. Pure memory, bounded: a few
// caches and a bounded number of records in all, the oldest dropped first; a cache is never
// changed after it is made (the scan returns a new one), so the entries are shared as they are.
import type { WorkspaceStatCache } from "../../copyback/delta/types";
import { VersionedLru } from "../../memory/versioned-lru";

const MAX_CACHES = 4;
/** Enough for a few ordinary workspaces; a 200,000-file cache (about 40 MiB decoded) is not kept. */
const MAX_RECORDS = 50_000;

export interface FileIdentity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export function identityKey(stats: FileIdentity): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

/** The caches by file, each for exactly one identity of that file. */
export class StatCacheMemory extends VersionedLru<WorkspaceStatCache> {
  constructor() {
    super({ maxValues: MAX_CACHES, maxWeight: MAX_RECORDS, weigh: (cache) => Object.keys(cache.files).length });
  }
}
