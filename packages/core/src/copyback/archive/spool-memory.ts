// Shared-memory blocks for archive bytes in transit (tar-writer.ts fills them, spool.ts keeps
// them until extraction is done), recycled within the process. A full copyback holds the whole
// archive in memory between validation and extraction; fresh memory costs a page fault per
// 4 KiB on first touch (about a second per 200 MiB on a small VM), so blocks a finished
// receive gives back are reused by the next export instead. The pool is bounded (256 MiB, one
// spool's memory bound: spool.ts) and dropped after a minute without use, so an idle process
// does not keep it.
//
// A block is given back only by the spool that owned it, after its extraction threads
// finished: nothing reads it any more when it is handed out again.

export const SPOOL_BLOCK_BYTES = 1024 * 1024;
const POOL_MAX_BLOCKS = 256;
const POOL_IDLE_MS = 60_000;

const pool: SharedArrayBuffer[] = [];
let idleTimer: NodeJS.Timeout | undefined;

export function takeBlock(): SharedArrayBuffer {
  return pool.pop() ?? new SharedArrayBuffer(SPOOL_BLOCK_BYTES);
}

export function giveBackBlocks(blocks: Iterable<SharedArrayBuffer>): void {
  for (const block of blocks) {
    if (pool.length >= POOL_MAX_BLOCKS) break;
    if (block.byteLength === SPOOL_BLOCK_BYTES) pool.push(block);
  }
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    pool.length = 0;
  }, POOL_IDLE_MS);
  idleTimer.unref();
}

/** Blocks waiting for reuse (tests, diagnostics). */
export function pooledBlocks(): number {
  return pool.length;
}
