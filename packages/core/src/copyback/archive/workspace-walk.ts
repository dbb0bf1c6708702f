// Lists a workspace for export: lstat only, never following a symlink, in a deterministic
// order (each directory before its contents, names in code-unit order), excluded trees pruned.
//
// Synchronous system calls (a few microseconds each, against tens for a promise round trip
// through the thread pool), with the event loop given back every few hundred entries.
import { lstatSync, readdirSync, readlinkSync, type Dirent, type Stats } from "node:fs";
import { join } from "node:path";
import { setImmediate as yieldToEventLoop } from "node:timers/promises";
import type { ExcludeMatcher } from "../manifest/exclude";
import { WorkspaceExportError } from "./errors";
import { errnoOf } from "../../errors";

export type WorkspaceEntryKind = "directory" | "file" | "symlink" | "fifo" | "device" | "socket";

export interface WorkspaceEntry {
  /** Workspace-relative POSIX path. */
  path: string;
  absolute: string;
  kind: WorkspaceEntryKind;
  /** lstat result; absent for regular files, which the writer fstats once opened. */
  stats?: Stats;
  /** Symlink target, exactly as stored (readlink). */
  target?: string;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });
const ENTRIES_PER_TURN = 500;

function kindOf(stats: Stats): WorkspaceEntryKind {
  if (stats.isDirectory()) return "directory";
  if (stats.isFile()) return "file";
  if (stats.isSymbolicLink()) return "symlink";
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  return "device";
}

export async function walkWorkspace(
  root: string,
  excluded: ExcludeMatcher,
): Promise<WorkspaceEntry[]> {
  const out: WorkspaceEntry[] = [];
  for await (const entry of streamWorkspace(root, excluded)) out.push(entry);
  return out;
}

/**
 * The same listing, entry by entry as it is read: the export (export.ts) writes each entry while
 * the rest is still being listed, so a 200,000-entry workspace is never held as one list
 * (a copyback's memory does not grow with the workspace). Errors arrive where the
 * listing meets them, as the array form would have thrown them.
 */
export async function* streamWorkspace(
  root: string,
  excluded: ExcludeMatcher,
): AsyncGenerator<WorkspaceEntry> {
  let rootStats: Stats;
  try {
    rootStats = lstatSync(root);
  } catch (error) {
    throw new WorkspaceExportError("the workspace cannot be read", "", errnoOf(error));
  }
  if (!rootStats.isDirectory()) {
    throw new WorkspaceExportError("the workspace is not a directory (or is a symbolic link)", "");
  }
  let sinceYield = 0;
  // Depth first, each directory's children in sorted order right after it.
  async function* visit(absolute: string, relative: string): AsyncGenerator<WorkspaceEntry> {
    for (const { name, dirent } of listSorted(absolute, relative)) {
      if (++sinceYield >= ENTRIES_PER_TURN) {
        sinceYield = 0;
        await yieldToEventLoop();
      }
      const path = relative === "" ? name : `${relative}/${name}`;
      if (excluded(path)) continue;
      const abs = join(absolute, name);
      // Regular files are opened (O_NOFOLLOW) and fstat'ed by the writer; no lstat needed here.
      if (dirent.isFile()) {
        yield { path, absolute: abs, kind: "file" };
        continue;
      }
      let stats: Stats;
      try {
        stats = lstatSync(abs);
      } catch (error) {
        if (errnoOf(error) === "ENOENT") continue; // vanished while listing
        throw new WorkspaceExportError("an entry cannot be read", path, errnoOf(error));
      }
      const kind = kindOf(stats);
      if (kind === "symlink") {
        let target: string;
        try {
          target = readlinkSync(abs);
        } catch (error) {
          throw new WorkspaceExportError("a symbolic link cannot be read", path, errnoOf(error));
        }
        yield { path, absolute: abs, kind, stats, target };
      } else if (kind === "file") {
        yield { path, absolute: abs, kind };
      } else {
        yield { path, absolute: abs, kind, stats };
        if (kind === "directory") yield* visit(abs, path);
      }
    }
  }
  yield* visit(root, "");
}

/**
 * The workspace's archive bytes (a header per entry and the file sizes), counted only until they
 * pass `atLeast`: a cheap lower bound of an export's size for the receive's spool (an
 * archive known to outgrow the spool's memory bound goes to its file from the first byte instead
 * of holding 256 MiB in memory only to write them out). A hint and nothing more: the tree may
 * change before it is exported, the spool still spills at its bound whatever it was told, and a
 * listing error only ends the count (the export itself reports it).
 */
export async function workspaceBytesAtLeast(
  root: string,
  excluded: ExcludeMatcher,
  atLeast: number,
): Promise<number> {
  let total = 0;
  try {
    for await (const entry of streamWorkspace(root, excluded)) {
      total += 512;
      if (entry.kind === "file") {
        try {
          total += lstatSync(entry.absolute).size;
        } catch {
          // vanished or unreadable: the export decides what that means
        }
      }
      if (total > atLeast) break;
    }
  } catch {
    // unreadable listing: the export fails on it by itself
  }
  return total;
}

function listSorted(
  absolute: string,
  relative: string,
): { name: string; dirent: Dirent<Buffer> }[] {
  let dirents: Dirent<Buffer>[];
  try {
    dirents = readdirSync(absolute, { encoding: "buffer", withFileTypes: true });
  } catch (error) {
    throw new WorkspaceExportError("a directory cannot be read", relative, errnoOf(error));
  }
  const named: { name: string; dirent: Dirent<Buffer> }[] = [];
  for (const dirent of dirents) {
    // A name that is not UTF-8 cannot be written into a tar path faithfully; it is left out.
    try {
      named.push({ name: strictUtf8.decode(dirent.name), dirent });
    } catch {
      continue;
    }
  }
  return named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
