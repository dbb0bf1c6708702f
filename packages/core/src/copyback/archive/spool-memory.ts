// Shared-memory blocks for archive bytes in transit (tar-writer.ts fills them, spool.ts keeps
// them until extraction is done), recycled within the process. A full copyback holds the whole
// archive in memory between validation and extraction; fresh memory costs a page fault per
// 4 KiB on first touch (about a second per 200 MiB on a small VM), so blocks a finished
// receive gives back are reused by the next export instead. The pool is bounded (256 MiB, one
// spool's memory bound: spool.ts) and dropped after a minute without use, so an idle process
// does not keep it.
//
// A block is a 1 MiB view into a 64 MiB slab, never a 1 MiB allocation of its own: the C
// allocator serves 1 MiB requests from its arenas once a few were freed (glibc raises its mmap
// threshold up to 32 MiB) and keeps what is freed there, so a spool that let go of 256 MiB, or
// the export blocks of a spilled 5 GiB archive, stayed resident in the process for good
// (RssAnon 380 MiB over a 70 MiB heap after a 1 GiB receive). A slab is above any
// such threshold: it is mapped on its own and unmapped once no view of it is left.
//
// A block is given back only by the spool that owned it, after its extraction threads
// finished: nothing reads it any more when it is handed out again.

export const SPOOL_BLOCK_BYTES = 1024 * 1024;
/** Larger than glibc's largest dynamic mmap threshold (32 MiB), so each slab is its own mapping. */
const SLAB_BYTES = 64 * SPOOL_BLOCK_BYTES;
const POOL_MAX_BLOCKS = 256;
const POOL_IDLE_MS = 60_000;

/** One block: SPOOL_BLOCK_BYTES of a slab (a SharedArrayBuffer), at a multiple of the block size. */
export type SpoolBlock = Uint8Array & { buffer: SharedArrayBuffer };

const pool: SpoolBlock[] = [];
let idleTimer: NodeJS.Timeout | undefined;
/** The slab new blocks are cut from, and how much of it is handed out. */
let slab: SharedArrayBuffer | undefined;
let slabUsed = 0;

/**
 * A block for bytes that will come back to the pool (`returns`: a recycling export's output,
 * a spool's own copies) is taken from the pool or cut from a slab. One whose holder drops it
 * instead (an export nobody recycles: a seed, a delta archive) is a block of its own: taking it
 * from the pool or a slab would leave that slab mapped, pinned by its pooled neighbours, while
 * fresh slabs replace what was taken (a process grew by 256 MiB per such export).
 */
export function takeBlock(opts: { returns?: boolean } = {}): SpoolBlock {
  if (opts.returns === false) return new Uint8Array(new SharedArrayBuffer(SPOOL_BLOCK_BYTES)) as SpoolBlock;
  const pooled = pool.pop();
  if (pooled !== undefined) return pooled;
  if (slab === undefined || slabUsed === SLAB_BYTES) {
    slab = new SharedArrayBuffer(SLAB_BYTES);
    slabUsed = 0;
  }
  const block = new Uint8Array(slab, slabUsed, SPOOL_BLOCK_BYTES) as SpoolBlock;
  slabUsed += SPOOL_BLOCK_BYTES;
  // A slab whose last block is out is no longer held here: its blocks alone keep it mapped.
  if (slabUsed === SLAB_BYTES) slab = undefined;
  return block;
}

/** The whole block a chunk cut from its start belongs to (tar-writer.ts hands over such chunks). */
export function blockOf(chunk: Uint8Array): SpoolBlock | undefined {
  if (!(chunk.buffer instanceof SharedArrayBuffer)) return undefined;
  if (chunk.byteOffset % SPOOL_BLOCK_BYTES !== 0 || chunk.byteOffset + SPOOL_BLOCK_BYTES > chunk.buffer.byteLength) return undefined;
  return new Uint8Array(chunk.buffer, chunk.byteOffset, SPOOL_BLOCK_BYTES) as SpoolBlock;
}

export function giveBackBlocks(blocks: Iterable<Uint8Array>): void {
  for (const block of blocks) {
    if (pool.length >= POOL_MAX_BLOCKS) break;
    if (block.buffer instanceof SharedArrayBuffer && block.byteLength === SPOOL_BLOCK_BYTES) pool.push(block as SpoolBlock);
  }
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    pool.length = 0;
    slab = undefined;
  }, POOL_IDLE_MS);
  idleTimer.unref();
}

/** Blocks waiting for reuse (tests, diagnostics). */
export function pooledBlocks(): number {
  return pool.length;
}
