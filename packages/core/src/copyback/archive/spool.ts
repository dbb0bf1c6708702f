// Where a received archive's tar bytes wait between validation and extraction (R-UA-2: nothing
// is extracted before the whole archive was validated, so every byte must be kept until then).
// In memory up to a bound (default 256 MiB: a typical workspace never touches the disk twice),
// beyond it in a private temporary file that is unlinked the moment it is created, so no other
// process can open it by name and nothing is left behind by a crash. The bound is what one
// copyback may add to its process for the bytes in transit: when the spool moves to the file it
// lets go of its memory (dropped, not pooled), so a 5 GiB archive costs no more spool memory
// than a 256 MiB one.
// Not lower: at 128 MiB the 200 MiB benchmark tree spilled and its extraction, reading the
// file back, took 8.7-8.9 s against 4.7-5.5 s from memory (2026-12-01, load 9 to 12). Only the receiver writes
// the spool, and extraction reads back exactly the bytes the validator saw.
//
// The memory is SharedArrayBuffer blocks, so extraction threads (write-worker.ts) read the
// bytes where they are; a spill file is read through its descriptor, which threads share.
import { closeSync, constants, openSync, readSync, rmdirSync, unlinkSync, writeSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { blockOf, giveBackBlocks, SPOOL_BLOCK_BYTES, takeBlock, type SpoolBlock } from "./spool-memory";

export const DEFAULT_SPOOL_MEMORY_BYTES = 256 * 1024 * 1024;

export interface SpoolOptions {
  /** Bytes kept in memory; the spool moves to a file above this. */
  memoryLimitBytes?: number;
  /** Directory for that file (default: the OS temporary directory). */
  spillDirectory?: string;
  /**
   * A lower bound of the archive's size, when its producer knows one (ExportStream.expectedBytes):
   * above the memory bound the spool starts in its file (a 5 GiB export never holds
   * 256 MiB in memory first, which alone nearly filled a 512 MiB budget). A hint: wrong or not,
   * every byte is kept and the memory bound holds.
   */
  expectedBytes?: number;
}

/** A run of spooled bytes in shared memory: spool offset `start`, `length` bytes. */
export interface SpoolSegment {
  buffer: SharedArrayBuffer;
  byteOffset: number;
  start: number;
  length: number;
}

/** What an extraction thread needs to read the spool (structured-clone safe). */
export type SpoolSource =
  | { kind: "memory"; segments: SpoolSegment[]; length: number }
  | { kind: "file"; fd: number; length: number };

/**
 * Chunks that their producer hands over for good (exportWorkspaceArchive's, in shared memory
 * and never written again): the spool keeps them as they are instead of copying. Any other
 * chunk is copied, so a producer that reuses its buffers cannot change validated bytes.
 */
const handedOver = new WeakSet<Uint8Array>();
/**
 * Among those, chunks whose producer was told that a receive is their only consumer
 * (exportWorkspaceArchive's `recycle`): their blocks go back to the pool when the spool closes.
 */
const recyclable = new WeakSet<Uint8Array>();

export function handOver(chunk: Uint8Array, opts: { recycle?: boolean } = {}): Uint8Array {
  if (!(chunk.buffer instanceof SharedArrayBuffer)) return chunk;
  handedOver.add(chunk);
  if (opts.recycle === true) recyclable.add(chunk);
  return chunk;
}

export class ArchiveSpool {
  #segments: SpoolSegment[] = [];
  /** Shared block that copied chunks are appended to, and how much of it is used. */
  #tail: SpoolBlock | undefined;
  #tailUsed = 0;
  /** Blocks this spool may give back to the pool once nothing reads them any more. */
  #owned: SpoolBlock[] = [];
  #length = 0;
  #fd: number | undefined;
  readonly #memoryLimit: number;
  readonly #spillDirectory: string;
  readonly #startInFile: boolean;

  constructor(opts: SpoolOptions = {}) {
    this.#memoryLimit = opts.memoryLimitBytes ?? DEFAULT_SPOOL_MEMORY_BYTES;
    this.#spillDirectory = opts.spillDirectory ?? tmpdir();
    this.#startInFile = (opts.expectedBytes ?? 0) > this.#memoryLimit;
  }

  get length(): number {
    return this.#length;
  }

  /** Whether the bytes went to a file. */
  get spilled(): boolean {
    return this.#fd !== undefined;
  }

  /**
   * Keeps the chunk's bytes (by reference when handed over: handOver, else copied) and returns
   * the bytes to validate. In memory: the chunk itself. In the file: the same bytes read back
   * from it (R-UA-2: exactly what extraction will read), so nothing reads the chunk any more and
   * a chunk its producer lets the receive recycle goes back to the pool at once: a spilled 5 GiB
   * export reuses a few blocks instead of 5 GiB of fresh memory (its page faults, and
   * garbage that piled up faster than it was collected).
   */
  async append(chunk: Uint8Array): Promise<Uint8Array> {
    if (chunk.length === 0) return chunk;
    if (this.#fd === undefined && (this.#startInFile || this.#length + chunk.length > this.#memoryLimit)) {
      await this.#spill();
    }
    if (this.#fd !== undefined) {
      const start = this.#length;
      writeAll(this.#fd, chunk, start);
      this.#length += chunk.length;
      if (recyclable.delete(chunk)) {
        const block = blockOf(chunk);
        if (block !== undefined) giveBackBlocks([block]);
      }
      return readAll(this.#fd, chunk.length, start);
    }
    if (handedOver.has(chunk)) {
      if (recyclable.has(chunk)) {
        recyclable.delete(chunk); // one owner only
        const block = blockOf(chunk);
        if (block !== undefined) this.#owned.push(block);
      }
      this.#segments.push({
        buffer: chunk.buffer as SharedArrayBuffer,
        byteOffset: chunk.byteOffset,
        start: this.#length,
        length: chunk.length,
      });
      this.#length += chunk.length;
      return chunk;
    }
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    for (let at = 0; at < bytes.length;) {
      if (this.#tail === undefined || this.#tailUsed === SPOOL_BLOCK_BYTES) {
        this.#tail = takeBlock();
        this.#tailUsed = 0;
        this.#owned.push(this.#tail);
      }
      const take = Math.min(SPOOL_BLOCK_BYTES - this.#tailUsed, bytes.length - at);
      const tail = this.#tail;
      const into = tail.byteOffset + this.#tailUsed;
      // Buffer#copy is a plain memmove; TypedArray#set into shared memory is far slower.
      bytes.copy(Buffer.from(tail.buffer, into, take), 0, at, at + take);
      const last = this.#segments[this.#segments.length - 1];
      if (last?.buffer === tail.buffer && last.byteOffset + last.length === into) {
        last.length += take;
      } else {
        this.#segments.push({
          buffer: tail.buffer,
          byteOffset: into,
          start: this.#length,
          length: take,
        });
      }
      this.#tailUsed += take;
      this.#length += take;
      at += take;
    }
    return chunk;
  }

  /** For extraction threads; valid until close(). */
  source(): SpoolSource {
    return this.#fd !== undefined
      ? { kind: "file", fd: this.#fd, length: this.#length }
      : { kind: "memory", segments: this.#segments, length: this.#length };
  }

  /**
   * Frees the memory (its own blocks back to the pool: call only once no extraction thread
   * reads them) or closes (and so deletes) the file. Idempotent.
   */
  close(): void {
    giveBackBlocks(this.#owned);
    this.#owned = [];
    this.#segments = [];
    this.#tail = undefined;
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
  }

  async #spill(): Promise<void> {
    // A private directory (0700), a file created exclusively without following links, then
    // both names removed at once: only this descriptor reaches the bytes.
    const dir = await mkdtemp(path.join(this.#spillDirectory, "copyback-spool-"));
    const file = path.join(dir, "archive.tar");
    let fd: number;
    try {
      fd = openSync(
        file,
        constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o600,
      );
    } finally {
      try {
        unlinkSync(file);
      } catch {
        // not created
      }
      rmdirSync(dir);
    }
    for (const segment of this.#segments) {
      writeAll(
        fd,
        new Uint8Array(segment.buffer, segment.byteOffset, segment.length),
        segment.start,
      );
    }
    // Dropped, not pooled: a spilled archive is a large one, whose copyback goes on for minutes
    // with 200,000 entries' structures; a pool of 256 MiB kept idle beside them was most of what
    // its peak had over the target. The next in-memory export takes fresh blocks.
    this.#owned = [];
    this.#segments = [];
    this.#tail = undefined;
    this.#fd = fd;
  }
}

/** A fresh buffer (never one anything else holds) with `length` bytes of the file from `position`. */
function readAll(fd: number, length: number, position: number): Buffer {
  const out = Buffer.allocUnsafeSlow(length);
  for (let at = 0; at < length;) {
    const got = readSync(fd, out, at, length - at, position + at);
    if (got === 0) throw new Error("the spool file is shorter than what was written");
    at += got;
  }
  return out;
}

function writeAll(fd: number, chunk: Uint8Array, position: number): void {
  for (let at = 0; at < chunk.length;) {
    at += writeSync(fd, chunk, at, chunk.length - at, position + at);
  }
}
