// Writes a tar stream for a listed workspace: ustar headers, pax records only where ustar cannot
// hold a value (tar-header.ts). Portable: no owner, group or device/inode numbers.
//
// Speed: a workspace is mostly small files, and per-file overhead decides the race with GNU
// tar. Files are therefore read with synchronous system calls straight into a 1 MiB output
// buffer (open, fstat, read, close: no promise, no copy), and the event loop gets control back
// each time a buffer is handed on, so it is never blocked for more than about 1 MiB of reads.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { WorkspaceExportError } from "./errors";
import { errnoOf } from "../../errors";
import { handOver } from "./spool";
import { takeBlock, type SpoolBlock } from "./spool-memory";
import { encodeHeader, type HeaderFields } from "./tar-header";
import type { WorkspaceEntry } from "./workspace-walk";

export interface TarWriteOptions {
  /**
   * "link": a file already written under another path (same device and inode) becomes a
   * hard-link entry, as GNU tar does; "copy": every path carries its own bytes (R-UA-2 salvage).
   */
  hardLinks: "link" | "copy";
  /** The only consumer is one receiveWorkspaceArchive: its buffers may be reused afterwards. */
  recycle?: boolean;
}

const BLOCK = 512;
// O_NOFOLLOW: a file replaced by a symlink after listing is refused, never followed.
// O_NONBLOCK: a file replaced by a FIFO must not hang the export on open().
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

const headerBlocks = (fields: HeaderFields): Buffer[] => encodeHeader(fields);
const seconds = (stats: Stats): number => Math.floor(stats.mtimeMs / 1000);

/** Linux dev_t split (glibc's gnu_dev_major/minor). */
function deviceNumbers(rdev: number): { devmaj: number; devmin: number } {
  const big = BigInt(rdev);
  const devmaj = Number(((big >> 8n) & 0xfffn) | ((big >> 32n) & ~0xfffn));
  const devmin = Number((big & 0xffn) | ((big >> 12n) & ~0xffn));
  return { devmaj, devmin };
}

/** A Buffer over exactly the block (its chunks start at the block's start: spool.ts blockOf). */
const asBuffer = (block: SpoolBlock): Buffer => Buffer.from(block.buffer, block.byteOffset, block.byteLength);

/**
 * The output buffer being filled; handed on whole, then replaced (the consumer keeps it). In
 * shared memory and marked as handed over (spool.ts): a receiver in this process keeps the
 * chunks as they are, and its extraction threads read them in place, without a copy.
 */
class Output {
  buffer: Buffer;

  constructor(private readonly recycle: boolean) {
    this.buffer = asBuffer(takeBlock({ returns: recycle }));
  }

  length = 0;

  get room(): number {
    return this.buffer.length - this.length;
  }

  take(): Buffer {
    const full = this.buffer.subarray(0, this.length);
    handOver(full, { recycle: this.recycle });
    this.buffer = asBuffer(takeBlock({ returns: this.recycle }));
    this.length = 0;
    return full;
  }
}

function openForExport(entry: WorkspaceEntry): number {
  try {
    return openSync(entry.absolute, OPEN_FLAGS);
  } catch (error) {
    const errno = errnoOf(error);
    const reason =
      errno === "ELOOP"
        ? "a file was replaced by a symbolic link during export"
        : errno === "ENOENT"
          ? "a file vanished during export"
          : "a file cannot be read";
    throw new WorkspaceExportError(reason, entry.path, errno);
  }
}

export async function* writeTar(
  entries: Iterable<WorkspaceEntry> | AsyncIterable<WorkspaceEntry>,
  opts: TarWriteOptions,
): AsyncGenerator<Buffer> {
  const out = new Output(opts.recycle === true);
  const firstPathOf = new Map<string, string>();
  // Headers are small; a full buffer is handed on before one would not fit.
  function* put(blocks: Buffer[]): Generator<Buffer> {
    for (const block of blocks) {
      if (out.room < block.length) yield out.take();
      block.copy(out.buffer, out.length);
      out.length += block.length;
    }
  }

  for await (const entry of entries) {
    if (entry.kind === "file") {
      const fd = openForExport(entry);
      try {
        let stats: Stats;
        try {
          stats = fstatSync(fd);
        } catch (error) {
          throw new WorkspaceExportError("a file cannot be read", entry.path, errnoOf(error));
        }
        if (!stats.isFile()) {
          throw new WorkspaceExportError("a file changed type during export", entry.path);
        }
        const mode = stats.mode & 0o7777;
        const key = `${stats.dev}:${stats.ino}`;
        const first = stats.nlink > 1 ? firstPathOf.get(key) : undefined;
        if (first !== undefined && opts.hardLinks === "link") {
          yield* put(
            headerBlocks({
              path: entry.path,
              type: "Link",
              linkpath: first,
              mode,
              size: 0,
              mtime: seconds(stats),
            }),
          );
          continue;
        }
        if (stats.nlink > 1 && first === undefined) firstPathOf.set(key, entry.path);
        yield* put(
          headerBlocks({
            path: entry.path,
            type: "File",
            mode,
            size: stats.size,
            mtime: seconds(stats),
          }),
        );
        // Exactly the size in the header: a file that grows meanwhile is cut at that size,
        // one that shrinks fails the export (the header would lie).
        for (let position = 0; position < stats.size;) {
          if (out.room === 0) yield out.take();
          const want = Math.min(out.room, stats.size - position);
          let got: number;
          try {
            got = readSync(fd, out.buffer, out.length, want, position);
          } catch (error) {
            throw new WorkspaceExportError("a file cannot be read", entry.path, errnoOf(error));
          }
          if (got === 0) {
            throw new WorkspaceExportError("a file shrank while it was exported", entry.path);
          }
          out.length += got;
          position += got;
        }
        const pad = (BLOCK - (stats.size % BLOCK)) % BLOCK;
        if (out.room < pad) yield out.take();
        out.buffer.fill(0, out.length, out.length + pad);
        out.length += pad;
      } finally {
        closeSync(fd);
      }
    } else {
      const stats = entry.stats as Stats;
      const mode = stats.mode & 0o7777;
      switch (entry.kind) {
        case "directory":
          yield* put(headerBlocks({ path: `${entry.path}/`, type: "Directory", mode, size: 0 }));
          break;
        case "symlink":
          yield* put(
            headerBlocks({
              path: entry.path,
              type: "SymbolicLink",
              linkpath: entry.target as string,
              mode,
              size: 0,
              mtime: seconds(stats),
            }),
          );
          break;
        case "fifo":
          yield* put(
            headerBlocks({ path: entry.path, type: "FIFO", mode, size: 0, mtime: seconds(stats) }),
          );
          break;
        case "device":
          yield* put(
            headerBlocks({
              path: entry.path,
              type: stats.isBlockDevice() ? "BlockDevice" : "CharacterDevice",
              mode,
              size: 0,
              mtime: seconds(stats),
              ...deviceNumbers(stats.rdev),
            }),
          );
          break;
        case "socket":
          break; // tar has no socket type; GNU tar skips them too
      }
    }
    if (out.room === 0) yield out.take();
  }
  yield* put([Buffer.alloc(BLOCK * 2)]);
  yield out.take();
}
