// extractValidatedArchive: validation first, extraction only of what was validated (R-UA-2,
// R-UA-4). A rejected archive never reaches node-tar, so not a single byte of it is written.
// Extraction itself is defended again: node-tar runs with its strict, path-preserving-off
// options, a filter checks every entry against the validated list (same path, type, size and
// target, in the same order), symlinks are not left to node-tar but created afterwards, when
// no later entry can be written through them, and any failure empties the destination again.
import { once } from "node:events";
import {
  chmod,
  lstat,
  mkdir,
  open,
  readdir,
  realpath,
  rm,
  rmdir,
  symlink,
  unlink,
} from "node:fs/promises";
import { join } from "node:path";
import { Unpack, type ReadEntry } from "tar";
import { readArchiveBytes } from "./archive-bytes";
import { forEachLimited } from "./concurrency";
import {
  ArchiveDestinationError,
  ArchiveExtractionError,
  UnsafeArchiveError,
  errnoOf,
} from "./errors";
import { MAX_EXTENSION_HEADER_BYTES, resolveLimits, type ArchiveLimits } from "./limits";
import { inspectArchive, type ValidatedEntry } from "./validate";

export interface ExtractOptions {
  limits?: Partial<ArchiveLimits>;
}

/** Permission bits only: setuid, setgid and sticky never survive extraction. */
const PERMISSIONS = 0o777;

export async function extractValidatedArchive(
  file: string,
  destDir: string,
  opts: ExtractOptions = {},
): Promise<void> {
  const limits = resolveLimits(opts.limits);
  await assertEmptyDirectory(destDir);
  // One open file for both passes: what is extracted is read from the file that was validated.
  const handle = await open(file, "r");
  try {
    const inspection = await inspectArchive(handle, limits);
    if (inspection.validation.kind === "rejected") {
      throw new UnsafeArchiveError(inspection.validation.violations);
    }
    const entries = inspection.entries.filter((e) => e.kind !== "root");
    if (entries.length === 0) return;
    const dest = await assertEmptyDirectory(destDir);
    try {
      await unpackFilesAndDirectories(handle, limits, dest, inspection.entries);
      await createSymlinks(dest, entries);
      await applyModes(dest, entries);
    } catch (error) {
      await emptyDirectory(dest);
      if (error instanceof ArchiveExtractionError) throw error;
      throw new ArchiveExtractionError("could not write the extracted files", errnoOf(error));
    }
  } finally {
    await handle.close();
  }
}

/** Returns the destination's real path once it is known to be an existing, empty, real directory. */
async function assertEmptyDirectory(destDir: string): Promise<string> {
  let stats;
  try {
    stats = await lstat(destDir);
  } catch (error) {
    if (errnoOf(error) === "ENOENT")
      throw new ArchiveDestinationError("the destination does not exist");
    throw error;
  }
  if (stats.isSymbolicLink())
    throw new ArchiveDestinationError("the destination is a symbolic link");
  if (!stats.isDirectory()) throw new ArchiveDestinationError("the destination is not a directory");
  if ((await readdir(destDir)).length > 0)
    throw new ArchiveDestinationError("the destination is not empty");
  return realpath(destDir);
}

async function unpackFilesAndDirectories(
  handle: Parameters<typeof readArchiveBytes>[0],
  limits: ArchiveLimits,
  dest: string,
  expected: readonly ValidatedEntry[],
): Promise<void> {
  let index = 0;
  let failure: ArchiveExtractionError | undefined;
  const unpack = new Unpack({
    cwd: dest,
    strict: true,
    preservePaths: false,
    preserveOwner: false,
    unlink: false,
    keep: false,
    brotli: false,
    zstd: false,
    maxMetaEntrySize: MAX_EXTENSION_HEADER_BYTES,
    maxDepth: limits.maxPathDepth + 1,
    filter: (_path, candidate) => {
      const entry = candidate as ReadEntry;
      const want = expected[index++];
      if (
        !want ||
        want.path !== entry.path ||
        want.type !== entry.type ||
        want.size !== entry.size ||
        want.linkpath !== (entry.linkpath || undefined)
      ) {
        failure ??= new ArchiveExtractionError("the archive changed after it was validated");
        unpack.abort(failure);
        return false;
      }
      // The archive root is the destination itself: its mode and times stay the caller's.
      // Symlinks are created after every file is in place (createSymlinks).
      if (want.kind !== "file" && want.kind !== "directory") return false;
      if (typeof entry.mode === "number") entry.mode &= PERMISSIONS;
      return true;
    },
  });
  const finished = new Promise<void>((resolve, reject) => {
    unpack.once("close", () => resolve());
    unpack.once("error", reject);
  });
  finished.catch(() => undefined);
  for await (const chunk of readArchiveBytes(handle, limits, {
    gzip: false,
    bytesRead: 0,
    bytesInflated: 0,
  })) {
    if (failure) break;
    if (!unpack.write(chunk)) await Promise.race([once(unpack, "drain"), finished]);
  }
  if (!failure) unpack.end();
  try {
    await finished;
  } catch (error) {
    throw failure ?? error;
  }
  if (failure) throw failure;
  if (index !== expected.length)
    throw new ArchiveExtractionError("the archive changed after it was validated");
}

async function createSymlinks(dest: string, entries: readonly ValidatedEntry[]): Promise<void> {
  for (const entry of entries) {
    if (entry.kind !== "symlink") continue;
    const parent = join(dest, ...entry.components.slice(0, -1));
    await mkdir(parent, { recursive: true });
    // Validation already guarantees no link sits on the way; checked again on the disk.
    if ((await realpath(parent)) !== parent) {
      throw new ArchiveExtractionError("a link's parent directory is not a plain directory");
    }
    await symlink(entry.linkpath as string, join(dest, ...entry.components));
  }
}

async function applyModes(dest: string, entries: readonly ValidatedEntry[]): Promise<void> {
  const files = entries.filter((e) => e.kind === "file" && e.mode !== undefined);
  await forEachLimited(files, 32, (e) =>
    chmod(join(dest, ...e.components), (e.mode as number) & PERMISSIONS),
  );
  // Directories last and deepest first: a read-only directory must not block work inside it.
  const dirs = entries
    .filter((e) => e.kind === "directory" && e.mode !== undefined)
    .sort((a, b) => b.components.length - a.components.length);
  for (const e of dirs) await chmod(join(dest, ...e.components), (e.mode as number) & PERMISSIONS);
}

/** Removes everything below `dir` (never following a link), making directories writable first. */
export async function emptyDirectory(dir: string): Promise<void> {
  for (const name of await readdir(dir)) await removeTree(join(dir, name));
}

async function removeTree(path: string): Promise<void> {
  const stats = await lstat(path);
  if (!stats.isDirectory()) {
    await unlink(path);
    return;
  }
  await chmod(path, 0o700);
  try {
    await rm(path, { recursive: true, force: true });
  } catch {
    for (const name of await readdir(path)) await removeTree(join(path, name));
    await rmdir(path);
  }
}
