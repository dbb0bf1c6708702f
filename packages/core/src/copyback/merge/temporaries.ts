// Temporary names of the merge. Every new file, link or directory is first created as
// `.copyback-tmp-<16 hex>` in its final directory and renamed into place, so a crash leaves at
// worst such a temporary beside old or new entries. The next merge removes exactly these names
// (the full pattern, inside the target, outside excluded trees): files and links are unlinked,
// directories removed only when empty (the merge never writes into a temporary directory, so a
// non-empty one is not ours and stays).
import { randomBytes } from "node:crypto";
import { readdirSync } from "node:fs";
import path from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import { DEFAULT_FS_CONCURRENCY, runPool } from "../manifest/concurrency";
import type { ExcludeMatcher } from "../manifest/exclude";
import { joinRelative } from "../manifest/paths";
import type { FsOps } from "./fs-ops";

export const TEMPORARY_PREFIX = ".copyback-tmp-";
const TEMPORARY_NAME = /^\.copyback-tmp-[0-9a-f]{16}$/;

const DIRECTORIES_PER_TURN = 256;

export function temporaryName(): string {
  return `${TEMPORARY_PREFIX}${randomBytes(8).toString("hex")}`;
}

export function isTemporaryName(name: string): boolean {
  return TEMPORARY_NAME.test(name);
}

/**
 * Removes stray temporaries left by an interrupted merge. Walks directory listings only (no
 * stat per file, links never followed) and returns the removed relative paths.
 *
 * The listings are read synchronously (a few microseconds each; on a tree of 500 directories
 * this is several times faster than a pool of asynchronous readdirs, and it runs on every
 * merge that has a delta), giving the event loop a turn every few hundred directories.
 */
export async function cleanStrayTemporaries(
  targetReal: string,
  excluded: ExcludeMatcher,
  fsOps: FsOps,
): Promise<string[]> {
  const strays: { rel: string; directory: boolean }[] = [];
  const pending = [""];
  let listed = 0;
  while (pending.length > 0) {
    const rel = pending.pop() as string;
    if (++listed % DIRECTORIES_PER_TURN === 0) await yieldToEventLoop();
    const dirents = readdirSync(rel === "" ? targetReal : path.join(targetReal, rel), {
      withFileTypes: true,
    });
    for (const dirent of dirents) {
      // Most entries are plain files that are not ours: nothing to build or match for them.
      const temporary = dirent.name.startsWith(TEMPORARY_PREFIX) && isTemporaryName(dirent.name);
      if (!temporary && !dirent.isDirectory()) continue;
      const child = joinRelative(rel, dirent.name);
      if (excluded(child)) continue;
      if (dirent.isDirectory()) {
        if (temporary) strays.push({ rel: child, directory: true });
        else pending.push(child);
      } else if (temporary && (dirent.isFile() || dirent.isSymbolicLink())) {
        strays.push({ rel: child, directory: false });
      }
    }
  }
  const removed: string[] = [];
  await runPool(strays, DEFAULT_FS_CONCURRENCY, async ({ rel, directory }) => {
    if (!directory) {
      await fsOps.unlink(path.join(targetReal, rel));
      removed.push(rel);
      return;
    }
    try {
      await fsOps.rmdir(path.join(targetReal, rel));
      removed.push(rel);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
    }
  });
  return removed.sort();
}
