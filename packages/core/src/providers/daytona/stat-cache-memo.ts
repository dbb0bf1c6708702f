// The controller's copy of each sandbox's stat cache (issue 24, bytes moved), so that a delta
// export neither downloads the cache it wrote itself nor uploads one the sandbox already holds.
// A copy is used only when the sandbox states, for its cache file, exactly the sha256 of the bytes
// the copy was written as: that is the same evidence a download would give (transfer.ts checks a
// download against the same digest), so the cache stays what it was, an accelerator the host
// never trusts for a delta's bytes. In memory, bounded; a restarted controller downloads once.
import type { DaytonaStatCache } from "./delta-scan";

/** Past this the oldest copies go (a 200,000-file cache is about 30 MiB as JSON). */
export const STAT_CACHE_MEMO_BYTES = 64 * 2 ** 20;

interface Copy {
  sha256: string;
  cache: DaytonaStatCache;
  bytes: number;
}

export class StatCacheMemo {
  private readonly copies = new Map<string, Copy>();
  private total = 0;

  constructor(private readonly maxBytes = STAT_CACHE_MEMO_BYTES) {}

  /** The copy of the sandbox's cache whose bytes have this sha256, if this controller holds it. */
  get(sandboxId: string, sha256: string): DaytonaStatCache | undefined {
    const copy = this.copies.get(sandboxId);
    if (!copy || copy.sha256 !== sha256) return undefined;
    // Most recently used last, so eviction takes the longest unused.
    this.copies.delete(sandboxId);
    this.copies.set(sandboxId, copy);
    return copy.cache;
  }

  /** Records what the sandbox now holds (`bytes`: the JSON's length, for the bound). */
  set(sandboxId: string, sha256: string, cache: DaytonaStatCache, bytes: number): void {
    this.forget(sandboxId);
    if (bytes > this.maxBytes) return;
    this.copies.set(sandboxId, { sha256, cache, bytes });
    this.total += bytes;
    for (const [id, copy] of this.copies) {
      if (this.total <= this.maxBytes) break;
      this.copies.delete(id);
      this.total -= copy.bytes;
    }
  }

  forget(sandboxId: string): void {
    const copy = this.copies.get(sandboxId);
    if (!copy) return;
    this.copies.delete(sandboxId);
    this.total -= copy.bytes;
  }

  get size(): number {
    return this.copies.size;
  }
}
