// Temporary names of the merge. Every new file, link or directory is first created as
// `.copyback-tmp-<16 hex>` in its final directory and renamed into place, so a crash leaves at
// worst such a temporary beside old or new entries. The next merge removes exactly these names
// (the full pattern, inside the target, outside excluded trees): files and links are unlinked,
// directories removed only when empty (the merge never writes into a temporary directory, so a
// non-empty one is not ours and stays).
import { randomBytes } from "node:crypto";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { createLimiter, DEFAULT_FS_CONCURRENCY } from "../manifest/concurrency";
import type { ExcludeMatcher } from "../manifest/exclude";
import { joinRelative } from "../manifest/paths";
import type { FsOps } from "./fs-ops";

export const TEMPORARY_PREFIX = ".copyback-tmp-";
const TEMPORARY_NAME = /^\.copyback-tmp-[0-9a-f]{16}$/;

export function temporaryName(): string {
  return `${TEMPORARY_PREFIX}${randomBytes(8).toString("hex")}`;
}

export function isTemporaryName(name: string): boolean {
  return TEMPORARY_NAME.test(name);
}

/**
 * Removes stray temporaries left by an interrupted merge. Walks directory listings only (no
 * stat per file, links never followed) and returns the removed relative paths.
 */
export async function cleanStrayTemporaries(
  targetReal: string,
  excluded: ExcludeMatcher,
  fsOps: FsOps,
): Promise<string[]> {
  const limit = createLimiter(DEFAULT_FS_CONCURRENCY);
  const removed: string[] = [];
  const visit = async (rel: string): Promise<void> => {
    const dirents = await limit(() =>
      readdir(rel === "" ? targetReal : path.join(targetReal, rel), { withFileTypes: true }),
    );
    await Promise.all(
      dirents.map(async (dirent) => {
        const child = joinRelative(rel, dirent.name);
        if (excluded(child)) return;
        const temporary = isTemporaryName(dirent.name);
        if (dirent.isDirectory()) {
          if (!temporary) return visit(child);
          try {
            await limit(() => fsOps.rmdir(path.join(targetReal, child)));
            removed.push(child);
          } catch (error) {
            if (
              (error as NodeJS.ErrnoException).code !== "ENOTEMPTY" &&
              (error as NodeJS.ErrnoException).code !== "EEXIST"
            )
              throw error;
          }
          return;
        }
        if (temporary && (dirent.isFile() || dirent.isSymbolicLink())) {
          await limit(() => fsOps.unlink(path.join(targetReal, child)));
          removed.push(child);
        }
      }),
    );
  };
  await visit("");
  return removed.sort();
}
