// exportDeltaArchive (sandbox side): scan the workspace (stat cache: only changed files are
// read), compare with the baseline, and export only the entries that differ, with their parent
// directories, through the archive module's tar writer. The complete snapshot manifest travels
// with it. No change: no archive at all, and the host only compares manifests.
import { lstatSync } from "node:fs";
import path from "node:path";
import { tarStream } from "../archive/export";
import type { WorkspaceEntry } from "../archive/workspace-walk";
import { compileExclude } from "../manifest/exclude";
import { pathIndex } from "../manifest/sorted-index";
import type { Manifest } from "../manifest/types";
import { deltaArchivePaths, diffManifests } from "./diff";
import { scanWorkspace } from "./scan";
import type { DeltaExport, WorkspaceStatCache } from "./types";

export interface DeltaExportOptions {
  exclude?: string[];
  cache?: WorkspaceStatCache;
}

export async function exportDeltaArchive(
  root: string,
  baseline: Manifest,
  opts: DeltaExportOptions = {},
): Promise<DeltaExport> {
  const excluded = compileExclude(opts.exclude);
  // The baseline is the manifest this sandbox was seeded with; the host checks the result.
  const baseKept: Manifest = {
    version: 1,
    entries: baseline.entries.filter((e) => !excluded(e.path)),
  };
  const scan = await scanWorkspace(root, {
    ...(opts.exclude ? { exclude: opts.exclude } : {}),
    ...(opts.cache ? { cache: opts.cache } : {}),
  });
  const { changed, removed } = diffManifests(baseKept, scan.manifest);
  const result: DeltaExport = {
    manifest: scan.manifest,
    changed: changed.map((e) => e.path),
    removed,
    archive: null,
    cache: scan.cache,
    hashedFiles: scan.hashedFiles,
    hashedBytes: scan.hashedBytes,
  };
  if (changed.length === 0) return result;

  const byPath = pathIndex(scan.manifest);
  const list = async (): Promise<WorkspaceEntry[]> =>
    deltaArchivePaths(changed).map((rel) => {
      const absolute = path.join(root, ...rel.split("/"));
      const entry = byPath.get(rel);
      if (entry?.type === "file") return { path: rel, absolute, kind: "file" };
      const stats = lstatSync(absolute);
      if (entry?.type === "symlink")
        return { path: rel, absolute, kind: "symlink", stats, target: entry.target ?? "" };
      return { path: rel, absolute, kind: "directory", stats };
    });
  // "copy": a file with other names is stored as bytes, so the delta never holds a hard link.
  // If a file changes after the scan, its bytes no longer match the manifest: the host refuses
  // the delta (receive.ts) and the copyback is retried.
  result.archive = tarStream(list, { hardLinks: "copy" });
  return result;
}
