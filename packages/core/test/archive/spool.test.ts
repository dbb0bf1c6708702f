// The spool's memory bound: a receive keeps at most DEFAULT_SPOOL_MEMORY_BYTES of an
// archive in memory, moves to an unlinked file past it and lets go of that memory, and the block
// pool never keeps more than one spool's worth.
import { mkdir, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ArchiveSpool, DEFAULT_SPOOL_MEMORY_BYTES, handOver } from "../../src/copyback/archive/spool";
import { blockOf, giveBackBlocks, pooledBlocks, SPOOL_BLOCK_BYTES, takeBlock } from "../../src/copyback/archive/spool-memory";
import { tempDir } from "./helpers";

let tmp: { path: string; cleanup(): Promise<void> };
beforeEach(async () => {
  tmp = await tempDir("spool");
});
afterEach(async () => tmp.cleanup());

// Writes and spills real bytes: 5 s is too short on a loaded 2-core machine (clean-clone CI at load 20-30, 2026-12-07).
describe("ArchiveSpool memory bound", { timeout: 30_000 }, () => {
  it("R-UA-2 keeps the default bound in memory and spills the byte past it, exactly", async () => {
    expect(DEFAULT_SPOOL_MEMORY_BYTES).toBeLessThanOrEqual(256 * 1024 * 1024);
    const spillDirectory = join(tmp.path, "spill");
    await mkdir(spillDirectory);
    const pooledBefore = pooledBlocks();
    const spool = new ArchiveSpool({ spillDirectory });
    const chunk = Buffer.alloc(SPOOL_BLOCK_BYTES);
    try {
      for (let i = 0; i < DEFAULT_SPOOL_MEMORY_BYTES / SPOOL_BLOCK_BYTES; i++) {
        chunk.fill(i % 251);
        await spool.append(chunk);
      }
      expect(spool.spilled).toBe(false);
      expect(spool.source().kind).toBe("memory");
      await spool.append(Buffer.from([7]));
      expect(spool.spilled).toBe(true);
      expect(spool.length).toBe(DEFAULT_SPOOL_MEMORY_BYTES + 1);
      // Unlinked at once: nothing to find by name; the memory is dropped, not kept in the pool
      // beside the rest of a large copyback.
      expect(await readdir(spillDirectory)).toEqual([]);
      expect(pooledBlocks()).toBeLessThanOrEqual(pooledBefore);
      const source = spool.source();
      expect(source.kind).toBe("file");
      if (source.kind !== "file") return;
      const { readSync } = await import("node:fs");
      const probe = Buffer.alloc(2);
      readSync(source.fd, probe, 0, 1, 5 * SPOOL_BLOCK_BYTES);
      readSync(source.fd, probe, 1, 1, DEFAULT_SPOOL_MEMORY_BYTES);
      expect([...probe]).toEqual([5, 7]);
    } finally {
      spool.close();
    }
    expect(pooledBlocks() * SPOOL_BLOCK_BYTES).toBeLessThanOrEqual(DEFAULT_SPOOL_MEMORY_BYTES);
  });

  it("R-UA-2 once spilled, the bytes to validate are read back from the file, and a recyclable chunk goes back to the pool at once", async () => {
    const spillDirectory = join(tmp.path, "spill");
    await mkdir(spillDirectory);
    const spool = new ArchiveSpool({ spillDirectory, memoryLimitBytes: 4 });
    try {
      const first = Buffer.from("abcd");
      expect(await spool.append(first)).toBe(first); // in memory: the chunk itself
      while (pooledBlocks() > 0) takeBlock();
      const block = takeBlock();
      const chunk = handOver(Buffer.from(block.buffer, block.byteOffset, 6).fill(0x41), { recycle: true });
      const kept = await spool.append(chunk);
      expect(spool.spilled).toBe(true);
      expect(kept).not.toBe(chunk);
      expect(kept.buffer).not.toBe(chunk.buffer);
      expect(Buffer.from(kept).toString()).toBe("AAAAAA");
      expect(pooledBlocks()).toBe(1);
      // The producer reuses its block: neither what was validated nor the file changes.
      takeBlock().fill(0x5a);
      expect(Buffer.from(kept).toString()).toBe("AAAAAA");
      const source = spool.source();
      if (source.kind !== "file") throw new Error("not spilled");
      const { readSync } = await import("node:fs");
      const back = Buffer.alloc(10);
      readSync(source.fd, back, 0, 10, 0);
      expect(back.toString()).toBe("abcdAAAAAA");
    } finally {
      spool.close();
    }
  });

  it("an archive its producer knows to be larger than the memory bound is spooled to the file from its first byte", async () => {
    const spillDirectory = join(tmp.path, "spill");
    await mkdir(spillDirectory);
    const large = new ArchiveSpool({ spillDirectory, memoryLimitBytes: 1024, expectedBytes: 1025 });
    const small = new ArchiveSpool({ spillDirectory, memoryLimitBytes: 1024, expectedBytes: 1024 });
    try {
      await large.append(Buffer.from("x"));
      await small.append(Buffer.from("x"));
      expect([large.spilled, small.spilled]).toEqual([true, false]);
      expect(await readdir(spillDirectory)).toEqual([]);
    } finally {
      large.close();
      small.close();
    }
  });

  it("R-UA-2 the block pool keeps at most one spool's memory bound", () => {
    const blocks = Array.from({ length: DEFAULT_SPOOL_MEMORY_BYTES / SPOOL_BLOCK_BYTES + 16 }, () => new Uint8Array(new SharedArrayBuffer(SPOOL_BLOCK_BYTES)));
    giveBackBlocks(blocks);
    expect(pooledBlocks() * SPOOL_BLOCK_BYTES).toBe(DEFAULT_SPOOL_MEMORY_BYTES);
  });

  it("a block is a view into a slab above the C allocator's mmap threshold (32 MiB), so freed slabs leave the process", () => {
    while (pooledBlocks() > 0) takeBlock();
    const a = takeBlock();
    const b = takeBlock();
    expect(a.byteLength).toBe(SPOOL_BLOCK_BYTES);
    expect(a.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(a.buffer.byteLength).toBeGreaterThan(32 * 1024 * 1024);
    expect(a.byteOffset % SPOOL_BLOCK_BYTES).toBe(0);
    expect(b.buffer === a.buffer ? b.byteOffset !== a.byteOffset : b.byteOffset === 0).toBe(true);
    // A chunk cut from a block's start leads back to its whole block; anything else does not.
    expect(blockOf(a.subarray(0, 10))?.byteOffset).toBe(a.byteOffset);
    expect(blockOf(a.subarray(1, 10))).toBeUndefined();
    expect(blockOf(Buffer.alloc(10))).toBeUndefined();
    // A block its holder drops (an export nobody recycles) is its own allocation: it neither
    // takes a pooled block nor a slab's.
    giveBackBlocks([a]);
    const dropped = takeBlock({ returns: false });
    expect(dropped.buffer.byteLength).toBe(SPOOL_BLOCK_BYTES);
    expect(pooledBlocks()).toBe(1);
  });
});
