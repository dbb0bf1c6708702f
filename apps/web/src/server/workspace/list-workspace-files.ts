// The "Workspace" listing of the run page: what is in an execution workspace on this host, as
// relative paths with sizes. Read with lstat/readdir only: a symlink is listed as a link and
// never followed (its target may be outside the workspace, and it is not shown), so the listing
// cannot be steered out of the workspace. Excluded trees (node_modules, .git, ...) are omitted
// with the same matcher the copyback engine uses, so the page lists what copyback handles.
import "server-only";
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { compileExclude, type ExcludeMatcher } from "@copyback/core";

export type WorkspaceEntryKind = "file" | "directory" | "symlink" | "other";

export interface WorkspaceEntry {
  /** Relative to the workspace root, "/"-separated. */
  path: string;
  kind: WorkspaceEntryKind;
  /** Bytes for files; null for everything else (a link's own size says nothing useful). */
  size: number | null;
}

export type WorkspaceListing =
  | {
      kind: "listed";
      entries: WorkspaceEntry[];
      /** Entries found beyond `entries` (counted up to the scan bound). */
      more: number;
      /** True when the scan stopped at its bound: there may be more than `more`. */
      moreIsLowerBound: boolean;
    }
  | { kind: "unavailable"; reason: "missing" | "not_a_directory" | "unreadable" | "invalid_exclusions" };

export interface ListOptions {
  excludedPaths?: readonly string[];
  /** Entries returned (default 500). */
  limit?: number;
  /** Entries looked at in all, listed or counted (default 20,000): the cost bound of one call. */
  scanLimit?: number;
}

export const DEFAULT_LISTING_LIMIT = 500;
const DEFAULT_SCAN_LIMIT = 20_000;

/** Lists `root` depth-first in path order; never follows a symlink (not even `root` itself). */
export async function listWorkspaceFiles(root: string, options: ListOptions = {}): Promise<WorkspaceListing> {
  const limit = options.limit ?? DEFAULT_LISTING_LIMIT;
  const scanLimit = Math.max(options.scanLimit ?? DEFAULT_SCAN_LIMIT, limit);
  let excluded: ExcludeMatcher;
  try {
    excluded = compileExclude(options.excludedPaths ?? []);
  } catch {
    // A workspace configured with an unusable exclusion: listing it anyway could show (and
    // walk) the trees it meant to hide.
    return { kind: "unavailable", reason: "invalid_exclusions" };
  }

  const rootStat = await lstat(root).catch((error: NodeJS.ErrnoException) => error);
  if (rootStat instanceof Error) return { kind: "unavailable", reason: rootStat.code === "ENOENT" ? "missing" : "unreadable" };
  if (!rootStat.isDirectory()) return { kind: "unavailable", reason: "not_a_directory" };

  const entries: WorkspaceEntry[] = [];
  let seen = 0;
  let stopped = false;

  // Pre-order walk with an explicit stack (deep trees cannot overflow the call stack): each
  // entry is visited right before what is below it, so the listing is in path order.
  const stack: string[] = await childrenOf(root, "", excluded);
  while (stack.length > 0) {
    if (seen >= scanLimit) {
      stopped = true;
      break;
    }
    const relative = stack.pop()!;
    const stat = await lstat(path.join(root, relative)).catch(() => null);
    // Vanished meanwhile: list what is there.
    if (!stat) continue;
    seen += 1;
    const kind: WorkspaceEntryKind = stat.isSymbolicLink()
      ? "symlink"
      : stat.isDirectory()
        ? "directory"
        : stat.isFile()
          ? "file"
          : "other";
    // Beyond the limit entries are only counted (directories still walked, to count below them).
    if (entries.length < limit) entries.push({ path: relative, kind, size: kind === "file" ? stat.size : null });
    if (kind === "directory") stack.push(...(await childrenOf(root, relative, excluded)));
  }

  return { kind: "listed", entries, more: seen - entries.length, moreIsLowerBound: stopped };
}

/** The non-excluded entries of a directory, reversed so that popping the stack yields path order. */
async function childrenOf(root: string, relativeDir: string, excluded: ExcludeMatcher): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(path.join(root, relativeDir));
  } catch {
    // Unreadable or vanished meanwhile: nothing below it is listed.
    return [];
  }
  return names
    .map((name) => (relativeDir === "" ? name : `${relativeDir}/${name}`))
    .filter((relative) => !excluded(relative))
    .sort()
    .reverse();
}
