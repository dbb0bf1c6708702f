// The stat caches this process wrote or read lately, by the file they are in and that file's
// identity (device, inode, size, mtime, ctime: a rewrite or a rename over it changes at least the
// ctime or the inode). The seed writes a sandbox's cache and the delta export reads it back a few
// seconds later in the same process; remembering the decoded records saves reading and decoding
// the file (issue 14: 6 to 9 ms of every small copyback at 10,000 files).
//
// Never trusted more than the file: a cache is an accelerator whose records are used only for a
// file whose lstat still matches (scan.ts), and the host verifies every byte the delta carries.
// An entry is handed out only while the file has exactly the identity it had when the entry was
// written or read, so a file rewritten by anyone else is read again. Pure memory, bounded: a few
// caches and a bounded number of records in all, the oldest dropped first; a cache is never
// changed after it is made (the scan returns a new one), so the entries are shared as they are.
import type { WorkspaceStatCache } from "../../copyback/delta/types";

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

interface Remembered {
  identity: string;
  cache: WorkspaceStatCache;
  records: number;
}

export class StatCacheMemory {
  readonly #byFile = new Map<string, Remembered>();
  #records = 0;

  /** The cache remembered for this file with exactly this identity, or undefined. */
  get(file: string, identity: string): WorkspaceStatCache | undefined {
    const remembered = this.#byFile.get(file);
    if (!remembered || remembered.identity !== identity) return undefined;
    // Most recently used last: the oldest is the first dropped.
    this.#byFile.delete(file);
    this.#byFile.set(file, remembered);
    return remembered.cache;
  }

  set(file: string, identity: string, cache: WorkspaceStatCache): void {
    this.forget(file);
    const records = Object.keys(cache.files).length;
    if (records > MAX_RECORDS) return;
    this.#byFile.set(file, { identity, cache, records });
    this.#records += records;
    while (this.#byFile.size > MAX_CACHES || this.#records > MAX_RECORDS) {
      this.forget(this.#byFile.keys().next().value as string);
    }
  }

  forget(file: string): void {
    const remembered = this.#byFile.get(file);
    if (!remembered) return;
    this.#records -= remembered.records;
    this.#byFile.delete(file);
  }

  get size(): number {
    return this.#byFile.size;
  }
}
