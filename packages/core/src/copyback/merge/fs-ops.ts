// Every mutating filesystem call the merge makes goes through this seam, so tests can inject a
// crash at any operation k and check what a real crash would leave behind.
import { execFile } from "node:child_process";
import { constants } from "node:fs";
import {
  chmod,
  copyFile,
  mkdir,
  open,
  realpath,
  rename,
  rmdir,
  symlink,
  unlink,
} from "node:fs/promises";

export interface FsOps {
  /** Creates `dest` exclusively (never through an existing link) with `src`'s bytes; clones when the filesystem can. */
  copyFile(src: string, dest: string): Promise<void>;
  chmod(path: string, mode: number): Promise<void>;
  /** fsync of a regular file's data and inode. */
  fsyncFile(path: string): Promise<void>;
  /** fsync of a directory: makes its entries (creations, renames, removals) durable. */
  fsyncDir(path: string): Promise<void>;
  /**
   * syncfs(2) of the filesystem holding `path`: every dirty page and inode of it reaches the
   * disk. Resolves false when the platform cannot do it (no `sync -f`), so the caller falls back
   * to per-file fsync; rejects when the flush itself failed.
   */
  syncFilesystem(path: string): Promise<boolean>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  rmdir(path: string): Promise<void>;
  mkdir(path: string, mode: number): Promise<void>;
  symlink(target: string, path: string): Promise<void>;
  realpath(path: string): Promise<string>;
}

async function fsyncPath(path: string, flags: number): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function syncFilesystem(path: string): Promise<boolean> {
  // Node has no syncfs binding; GNU coreutils' `sync -f` is exactly syncfs(2) on the file's
  // filesystem (and reports writeback errors through its exit status).
  return new Promise((resolve, reject) => {
    execFile("sync", ["-f", path], (error) => {
      if (error === null) return resolve(true);
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EACCES") return resolve(false); // no usable `sync` binary
      const failure = Object.assign(new Error("Flushing the workspace filesystem failed"), {
        code: "EIO",
        syscall: "syncfs",
      });
      reject(failure);
    });
  });
}

export const realFsOps: FsOps = {
  copyFile: (src, dest) =>
    copyFile(src, dest, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE),
  chmod: (path, mode) => chmod(path, mode),
  fsyncFile: (path) => fsyncPath(path, constants.O_RDONLY | constants.O_NOFOLLOW),
  fsyncDir: (path) => fsyncPath(path, constants.O_RDONLY | constants.O_DIRECTORY),
  syncFilesystem,
  rename: (from, to) => rename(from, to),
  unlink: (path) => unlink(path),
  rmdir: (path) => rmdir(path),
  mkdir: async (path, mode) => {
    await mkdir(path, { mode });
  },
  symlink: (target, path) => symlink(target, path),
  realpath: (path) => realpath(path),
};
