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
  return (await scanManifest(root, opts)).manifest;
}

export interface ManifestScan {
  manifest: Manifest;
  /** Directories that directly hold excluded (unlisted) entries. */
  excludedIn: Set<string>;
}

/** takeManifest, also telling where excluded entries sit (the merge moves only clean subtrees). */
export async function scanManifest(
  root: string,
  opts: TakeManifestOptions = {},
): Promise<ManifestScan> {
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
  const excludedIn = new Set<string>();
  const absolute = (rel: string): string => path.join(rootReal, ...rel.split("/"));

  // A file is opened directly (its mode and size come from the open descriptor); a directory
  // or an entry of unknown type is lstat'ed first. Links are read, never followed; their mode
  // is always 0o777 on Linux and carries no meaning (see entriesEqual).
  const visitEntry = async (
    rel: string,
    kind: "file" | "directory" | "symlink" | "other",
  ): Promise<void> => {
    const abs = absolute(rel);
    if (kind === "other") {
      const stat = await limit(() => lstat(abs));
      kind = stat.isDirectory()
        ? "directory"
        : stat.isSymbolicLink()
          ? "symlink"
          : stat.isFile()
            ? "file"
            : "other";
      if (kind === "directory") {
        entries.push({ path: rel, type: "directory", mode: stat.mode & 0o777 });
        return visitDirectory(rel);
      }
    }
    if (kind === "directory") {
      const stat = await limit(() => lstat(abs));
      if (!stat.isDirectory()) return visitEntry(rel, "other"); // replaced since listed
      entries.push({ path: rel, type: "directory", mode: stat.mode & 0o777 });
      return visitDirectory(rel);
    }
    if (kind === "symlink") {
      const target = await limit(() => readlink(abs));
      entries.push({ path: rel, type: "symlink", mode: 0o777, target });
      return;
    }
    if (kind === "file") {
      const hashed = await limit(() => hashFile(abs));
      // Replaced by something else between listing and open (O_NOFOLLOW refuses a link: ELOOP).
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
      return;
    }
    throw new ManifestError(
      "unsupported_entry",
      `${JSON.stringify(rel)} is not a regular file, directory or symlink`,
      rel,
    );
  };

  const visitDirectory = async (rel: string): Promise<void> => {
    const dirents = await limit(() =>
      readdir(rel === "" ? rootReal : absolute(rel), { withFileTypes: true }),
    );
    await Promise.all(
      dirents.map(async (dirent) => {
        const child = joinRelative(rel, dirent.name);
        if (excluded(child)) {
          excludedIn.add(rel);
          return;
        }
        const kind = dirent.isFile()
          ? "file"
          : dirent.isDirectory()
            ? "directory"
            : dirent.isSymbolicLink()
              ? "symlink"
              : "other";
        await visitEntry(child, kind);
      }),
    );
  };

  try {
    await visitDirectory("");
  } catch (error) {
    throw sanitizeFsError(error, [{ root: rootReal }]);
  }
  entries.sort((a, b) => comparePaths(a.path, b.path));
  return { manifest: { version: 1, entries }, excludedIn };
}
