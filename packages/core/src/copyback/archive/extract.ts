// extractValidatedArchive: validation first, extraction only of what was validated (R-UA-2,
// R-UA-4). A rejected archive is never read a second time, so not a single byte of it is
// written. Extraction is defended again on its own (write-entries.ts): node-tar's Parser reads
// the entries, each must match the validated list, files are created with O_EXCL|O_NOFOLLOW
// under directories we created ourselves, symlinks come last (when no later entry can be
// written through them), and any failure empties the destination again.
//
// node-tar's Unpack is not used to write: after its 7.5 security fixes it re-walks every
// parent directory with mkdir+lstat for each file, which made extraction several times slower
// than GNU tar, and with every path pre-validated those checks guard nothing ours do not.
import {
  chmod,
  lstat,
  mkdir,
  readdir,
  realpath,
  symlink,
  unlink,
} from "node:fs/promises";
import { chmodSync, readdirSync, rmdirSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { openArchive } from "./archive-bytes";
import { ArchiveDestinationError, ArchiveExtractionError, ArchiveReadError, UnsafeArchiveError } from "./errors";
import { errnoOf } from "../../errors";
import { resolveLimits, type ArchiveLimits } from "./limits";
import { entryComponents, inspectArchive, type ArchiveValidation, type ValidatedEntry } from "./validate";
import { PERMISSIONS, writeValidatedEntries } from "./write-entries";

/** What extraction returns: the validation verdict it acted on (validating again first is wasted work). */
export type SafeArchive = Extract<ArchiveValidation, { kind: "safe" }>;

export interface ExtractOptions {
  limits?: Partial<ArchiveLimits>;
}

export async function extractValidatedArchive(
  file: string,
  destDir: string,
  opts: ExtractOptions = {},
): Promise<SafeArchive> {
  const limits = resolveLimits(opts.limits);
  await assertEmptyDirectory(destDir);
  // One open file for both passes: what is extracted is read from the file that was validated.
  const handle = await openArchive(file);
  try {
    const inspection = await inspectArchive(handle, limits);
    if (inspection.validation.kind === "rejected") {
      throw new UnsafeArchiveError(inspection.validation.violations);
    }
    const safe = inspection.validation;
    const entries = inspection.entries.filter((e) => e.kind !== "root");
    if (entries.length === 0) return safe;
    const dest = await assertEmptyDirectory(destDir);
    try {
      await writeValidatedEntries(handle, limits, dest, inspection.entries);
      await createSymlinks(dest, entries);
      await applyDirectoryModes(dest, entries);
      return safe;
    } catch (error) {
      await emptyDirectory(dest);
      if (error instanceof ArchiveExtractionError || error instanceof ArchiveReadError) throw error;
      throw new ArchiveExtractionError("could not write the extracted files", errnoOf(error));
    }
  } finally {
    await handle.close();
  }
}

/** Returns the destination's real path once it is known to be an existing, empty, real directory. */
export async function assertEmptyDirectory(destDir: string): Promise<string> {
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

export async function createSymlinks(
  dest: string,
  entries: readonly ValidatedEntry[],
): Promise<void> {
  for (const entry of entries) {
    if (entry.kind !== "symlink") continue;
    const components = entryComponents(entry);
    await ensureRealDirectory(dest, components.slice(0, -1));
    await symlink(entry.linkpath as string, join(dest, ...components));
  }
}

/**
 * Makes sure every component is a real directory, creating missing ones, never passing through
 * a link. Validation already guarantees that; this checks it again on the disk.
 */
async function ensureRealDirectory(dest: string, components: readonly string[]): Promise<void> {
  let path = dest;
  for (const part of components) {
    path = join(path, part);
    try {
      const stats = await lstat(path);
      if (stats.isDirectory()) continue;
      throw new ArchiveExtractionError("a link's parent is not a plain directory");
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw error;
      await mkdir(path, 0o777);
    }
  }
}

/** Files got their modes when written; directories last and deepest first, so a read-only one
 * never blocked work inside it. */
export async function applyDirectoryModes(
  dest: string,
  entries: readonly ValidatedEntry[],
): Promise<void> {
  const depth = (e: ValidatedEntry) => entryComponents(e).length;
  const dirs = entries
    .filter((e) => e.kind === "directory" && e.mode !== undefined)
    .map((e) => ({ e, depth: depth(e) }))
    .sort((a, b) => b.depth - a.depth);
  for (const { e } of dirs) await chmod(join(dest, ...entryComponents(e)), (e.mode as number) & PERMISSIONS);
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
  await removeDirectory(path);
}

/**
 * Removals between two turns of the event loop: a few milliseconds even for files with data
 * (unlinking 199,000 files of a 5 GiB sandbox took 25 s, about 0.1 ms each).
 */
const REMOVALS_PER_TURN = 64;

/**
 * One directory at a time, never following a link (a dirent that is not a directory is
 * unlinked, whatever it points to), each made writable before it is emptied. Synchronous calls
 * with the event loop given back every few hundred removals, like the workspace walk: neither
 * fs.rm's recursive walk nor a promise per entry, which on a 199,000-entry tree (a sandbox
 * released after a 5 GiB copyback) grew the process by 100 to 200 MiB. This holds one
 * directory's listing per level and makes next to no garbage.
 */
async function removeDirectory(path: string, turn = { left: REMOVALS_PER_TURN }): Promise<void> {
  chmodSync(path, 0o700);
  for (const dirent of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, dirent.name);
    if (dirent.isDirectory()) await removeDirectory(child, turn);
    else unlinkSync(child);
    if (--turn.left <= 0) {
      turn.left = REMOVALS_PER_TURN;
      await yieldToEventLoop();
    }
  }
  rmdirSync(path);
}
