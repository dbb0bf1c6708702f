// Writes a tar stream for a listed workspace. Headers are encoded with node-tar's Header and
// Pax classes (pax records only where ustar cannot hold a value), so the output is what
// node-tar and GNU tar both read. Portable: no owner, group or device/inode numbers.
//
// Speed: many small files dominate a workspace, so files are opened, fstat'ed and (up to
// 1 MiB) read ahead of the writer, a bounded window at a time, and output is handed on in
// ~1 MiB chunks rather than per header.
import { constants, type Stats } from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { Header, Pax, type HeaderData } from "tar";
import { errnoOf, WorkspaceExportError } from "./errors";
import type { WorkspaceEntry } from "./workspace-walk";

export interface TarWriteOptions {
  /**
   * "link": a file already written under another path (same device and inode) becomes a
   * hard-link entry, as GNU tar does; "copy": every path carries its own bytes (R-UA-2 salvage).
   */
  hardLinks: "link" | "copy";
}

const BLOCK = 512;
const ZEROS = Buffer.alloc(BLOCK * 2);
const OUTPUT_CHUNK = 1024 * 1024;
const SMALL_FILE = 1024 * 1024;
const READ_AHEAD = 32;
const LARGE_READ = 1024 * 1024;
// O_NONBLOCK: a file swapped for a FIFO after listing must not hang the export on open().
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

interface OpenedFile {
  stats: Stats;
  /** The whole content when the file is small; otherwise the handle is still open. */
  data?: Buffer;
  handle?: FileHandle;
}

function headerBlocks(fields: HeaderData & { path: string }): Buffer[] {
  const header = new Header(fields);
  const needsPax = header.encode();
  const block = header.block as Buffer;
  if (!needsPax) return [block];
  const pax = new Pax({
    path: fields.path,
    linkpath: fields.linkpath,
    size: fields.size,
    mtime: fields.mtime,
  });
  return [pax.encode(), block];
}

async function readExactly(
  handle: FileHandle,
  target: Buffer,
  position: number,
  path: string,
): Promise<void> {
  let filled = 0;
  while (filled < target.length) {
    const { bytesRead } = await handle.read(
      target,
      filled,
      target.length - filled,
      position + filled,
    );
    if (bytesRead === 0)
      throw new WorkspaceExportError("a file shrank while it was exported", path);
    filled += bytesRead;
  }
}

async function openFile(entry: WorkspaceEntry): Promise<OpenedFile> {
  let handle: FileHandle;
  try {
    handle = await open(entry.absolute, OPEN_FLAGS);
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
  try {
    const stats = await handle.stat();
    if (!stats.isFile())
      throw new WorkspaceExportError("a file changed type during export", entry.path);
    if (stats.size > SMALL_FILE) return { stats, handle };
    const data = Buffer.allocUnsafe(stats.size);
    await readExactly(handle, data, 0, entry.path);
    await handle.close();
    return { stats, data };
  } catch (error) {
    await handle.close().catch(() => undefined);
    if (error instanceof WorkspaceExportError) throw error;
    throw new WorkspaceExportError("a file cannot be read", entry.path, errnoOf(error));
  }
}

/** Linux dev_t split (glibc's gnu_dev_major/minor). */
function deviceNumbers(rdev: number): { devmaj: number; devmin: number } {
  const big = BigInt(rdev);
  const devmaj = Number(((big >> 8n) & 0xfffn) | ((big >> 32n) & ~0xfffn));
  const devmin = Number((big & 0xffn) | ((big >> 12n) & ~0xffn));
  return { devmaj, devmin };
}

export async function* writeTar(
  entries: readonly WorkspaceEntry[],
  opts: TarWriteOptions,
): AsyncGenerator<Buffer> {
  const pending = new Map<number, Promise<OpenedFile>>();
  let scheduled = 0;
  const readAhead = (from: number) => {
    while (scheduled < entries.length && scheduled < from + READ_AHEAD) {
      const entry = entries[scheduled] as WorkspaceEntry;
      if (entry.kind === "file") {
        const opening = openFile(entry);
        opening.catch(() => undefined); // surfaced when the writer reaches this entry
        pending.set(scheduled, opening);
      }
      scheduled++;
    }
  };
  const firstPathOf = new Map<string, string>();
  let out: Buffer[] = [];
  let outLength = 0;
  const emit = (b: Buffer) => {
    out.push(b);
    outLength += b.length;
  };
  const take = (): Buffer => {
    const chunk = out.length === 1 ? (out[0] as Buffer) : Buffer.concat(out, outLength);
    out = [];
    outLength = 0;
    return chunk;
  };

  try {
    for (let i = 0; i < entries.length; i++) {
      readAhead(i);
      const entry = entries[i] as WorkspaceEntry;
      if (entry.kind === "file") {
        const opened = await (pending.get(i) as Promise<OpenedFile>);
        pending.delete(i);
        const { stats } = opened;
        const mode = stats.mode & 0o7777;
        const key = `${stats.dev}:${stats.ino}`;
        const first = stats.nlink > 1 ? firstPathOf.get(key) : undefined;
        if (first !== undefined && opts.hardLinks === "link") {
          await opened.handle?.close();
          for (const b of headerBlocks({
            path: entry.path,
            type: "Link",
            linkpath: first,
            mode,
            size: 0,
            mtime: stats.mtime,
          }))
            emit(b);
        } else {
          if (stats.nlink > 1 && first === undefined) firstPathOf.set(key, entry.path);
          for (const b of headerBlocks({
            path: entry.path,
            type: "File",
            mode,
            size: stats.size,
            mtime: stats.mtime,
          }))
            emit(b);
          if (opened.data) {
            emit(opened.data);
          } else if (opened.handle) {
            // Large file: stream it, handing on what is buffered first.
            try {
              for (let position = 0; position < stats.size;) {
                const chunk = Buffer.allocUnsafe(Math.min(LARGE_READ, stats.size - position));
                await readExactly(opened.handle, chunk, position, entry.path);
                position += chunk.length;
                if (outLength > 0) yield take();
                yield chunk;
              }
            } finally {
              await opened.handle.close();
            }
          }
          const pad = (BLOCK - (stats.size % BLOCK)) % BLOCK;
          if (pad > 0) emit(ZEROS.subarray(0, pad));
        }
      } else {
        const stats = entry.stats as Stats;
        const mode = stats.mode & 0o7777;
        switch (entry.kind) {
          case "directory":
            for (const b of headerBlocks({
              path: `${entry.path}/`,
              type: "Directory",
              mode,
              size: 0,
            }))
              emit(b);
            break;
          case "symlink":
            for (const b of headerBlocks({
              path: entry.path,
              type: "SymbolicLink",
              linkpath: entry.target as string,
              mode,
              size: 0,
              mtime: stats.mtime,
            }))
              emit(b);
            break;
          case "fifo":
            for (const b of headerBlocks({
              path: entry.path,
              type: "FIFO",
              mode,
              size: 0,
              mtime: stats.mtime,
            }))
              emit(b);
            break;
          case "device":
            for (const b of headerBlocks({
              path: entry.path,
              type: stats.isBlockDevice() ? "BlockDevice" : "CharacterDevice",
              mode,
              size: 0,
              mtime: stats.mtime,
              ...deviceNumbers(stats.rdev),
            }))
              emit(b);
            break;
          case "socket":
            break; // tar has no socket type; GNU tar skips them too
        }
      }
      if (outLength >= OUTPUT_CHUNK) yield take();
    }
    emit(ZEROS);
    yield take();
  } finally {
    // The consumer may stop early (or a file failed): close whatever was opened ahead.
    for (const opening of pending.values()) {
      const opened = await opening.catch(() => undefined);
      await opened?.handle?.close().catch(() => undefined);
    }
  }
}
