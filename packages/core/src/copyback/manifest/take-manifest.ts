// takeManifest: every entry of a directory tree with its type, mode, content hash and link
// text. Links are never followed (lstat/readlink/O_NOFOLLOW), excluded trees are never entered,
// and the result is sorted by path so equal trees give byte-identical JSON.
//
// Speed: directory listings, lstats and file hashes share one limiter (16 in flight by
// default), so a tree of many small files keeps the libuv pool busy while hashing on the main
// thread overlaps with reads.
import { lstat, readdir, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { createLimiter, DEFAULT_FS_CONCURRENCY } from "./concurrency";
import { ManifestError, sanitizeFsError } from "./errors";
import { compileExclude } from "./exclude";
import { hashFile } from "./hash-file";
import { comparePaths, joinRelative } from "./paths";
import type { Manifest, ManifestEntry, TakeManifestOptions } from "./types";

export async function takeManifest(
  root: string,
  opts: TakeManifestOptions = {},
): Promise<Manifest> {
  const excluded = compileExclude(opts.exclude);
  const limit = createLimiter(opts.concurrency ?? DEFAULT_FS_CONCURRENCY);
  let rootReal: string;
  try {
    rootReal = await realpath(root);
    if (!(await lstat(rootReal)).isDirectory())
      throw new ManifestError("manifest_root_invalid", "The manifest root is not a directory");
  } catch (error) {
    if (error instanceof ManifestError) throw error;
    throw new ManifestError(
      "manifest_root_invalid",
      "The manifest root does not exist or cannot be read",
    );
  }
  const entries: ManifestEntry[] = [];
  const absolute = (rel: string): string => path.join(rootReal, ...rel.split("/"));

  const visitEntry = async (rel: string): Promise<void> => {
    const abs = absolute(rel);
    const stat = await limit(() => lstat(abs));
    const mode = stat.mode & 0o777;
    if (stat.isDirectory()) {
      entries.push({ path: rel, type: "directory", mode });
      await visitDirectory(rel);
    } else if (stat.isSymbolicLink()) {
      const target = await limit(() => readlink(abs));
      entries.push({ path: rel, type: "symlink", mode, target });
    } else if (stat.isFile()) {
      const hashed = await limit(() => hashFile(abs));
      // The file was replaced by something else between lstat and open.
      if (!hashed.isFile)
        throw new ManifestError(
          "unsupported_entry",
          `${JSON.stringify(rel)} changed type while it was read`,
          rel,
        );
      entries.push({
        path: rel,
        type: "file",
        mode: hashed.mode,
        sha256: hashed.sha256,
        size: hashed.size,
      });
    } else {
      throw new ManifestError(
        "unsupported_entry",
        `${JSON.stringify(rel)} is not a regular file, directory or symlink`,
        rel,
      );
    }
  };

  const visitDirectory = async (rel: string): Promise<void> => {
    const names = await limit(() => readdir(rel === "" ? rootReal : absolute(rel)));
    await Promise.all(
      names.map(async (name) => {
        const child = joinRelative(rel, name);
        if (!excluded(child)) await visitEntry(child);
      }),
    );
  };

  try {
    await visitDirectory("");
  } catch (error) {
    throw sanitizeFsError(error, [{ root: rootReal }]);
  }
  entries.sort((a, b) => comparePaths(a.path, b.path));
  return { version: 1, entries };
}
