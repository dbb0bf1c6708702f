// Lists a workspace for export: lstat only, never following a symlink, in a deterministic
// order (each directory before its contents, names in code-unit order), excluded trees pruned.
import { lstat, readdir, readlink } from "node:fs/promises";
import type { Dirent, Stats } from "node:fs";
import { join } from "node:path";
import { errnoOf, WorkspaceExportError } from "./errors";
import type { ExcludeMatcher } from "../manifest/exclude";

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
  let rootStats: Stats;
  try {
    rootStats = await lstat(root);
  } catch (error) {
    throw new WorkspaceExportError("the workspace cannot be read", "", errnoOf(error));
  }
  if (!rootStats.isDirectory()) {
    throw new WorkspaceExportError("the workspace is not a directory (or is a symbolic link)", "");
  }
  return listDirectory(root, "", excluded);
}

async function listDirectory(
  absolute: string,
  relative: string,
  excluded: ExcludeMatcher,
): Promise<WorkspaceEntry[]> {
  let dirents: Dirent<Buffer>[];
  try {
    dirents = await readdir(absolute, { encoding: "buffer", withFileTypes: true });
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
  named.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const children = await Promise.all(
    named.map(async ({ name, dirent }) => {
      const path = relative === "" ? name : `${relative}/${name}`;
      if (excluded(path)) return [];
      const abs = join(absolute, name);
      // Regular files are opened (O_NOFOLLOW) and fstat'ed by the writer; no lstat needed here.
      if (dirent.isFile()) return [{ path, absolute: abs, kind: "file" } satisfies WorkspaceEntry];
      let stats: Stats;
      try {
        stats = await lstat(abs);
      } catch (error) {
        if (errnoOf(error) === "ENOENT") return []; // vanished while listing
        throw new WorkspaceExportError("an entry cannot be read", path, errnoOf(error));
      }
      const kind = kindOf(stats);
      if (kind === "file") return [{ path, absolute: abs, kind } satisfies WorkspaceEntry];
      if (kind === "symlink") {
        let target: string;
        try {
          target = await readlink(abs);
        } catch (error) {
          throw new WorkspaceExportError("a symbolic link cannot be read", path, errnoOf(error));
        }
        return [{ path, absolute: abs, kind, stats, target } satisfies WorkspaceEntry];
      }
      const self: WorkspaceEntry = { path, absolute: abs, kind, stats };
      if (kind !== "directory") return [self];
      return [self, ...(await listDirectory(abs, path, excluded))];
    }),
  );
  return children.flat();
}
