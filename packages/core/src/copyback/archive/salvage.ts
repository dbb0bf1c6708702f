// exportSalvageArchive (R-UA-2): what a provider exports after its first archive was rejected.
// Files, directories and the relative symlinks whose target exists inside the workspace;
// every other link (absolute, escaping, dangling, looping) is left out, never followed or
// deleted; hard-linked files are stored as ordinary bytes under each path; exclusions still
// apply and empty directories stay. The result passes validateArchive's symlink checks because
// the links are checked twice: on the disk, and again the way the validator will see them.
import { lstat, readlink } from "node:fs/promises";
import { join } from "node:path";
import { checkLinkTarget } from "./entry-path";
import { WorkspaceExportError } from "./errors";
import { errnoOf } from "../../errors";
import { compileExclude } from "../manifest/exclude";
import { tarStream } from "./export";
import { resolveLimits, type ArchiveLimits } from "./limits";
import { resolveLinkTarget, type LinkLookup } from "./symlink-resolution";
import { linkLookupKey } from "./tree-policy";
import { walkWorkspace, type WorkspaceEntry } from "./workspace-walk";

/**
 * The fixed informational message for the provider log when a salvage export was used (R-UA-2).
 * It names no path and no link target (R-UA-4).
 */
export const SALVAGE_INFO_MESSAGE =
  "The workspace export contained unsafe links; a second export omitted them.";

export interface SalvageExportOptions {
  exclude?: string[];
  /** The limits the archive will be validated with (link target length, case folding). */
  limits?: Partial<ArchiveLimits>;
}

export function exportSalvageArchive(
  root: string,
  opts: SalvageExportOptions = {},
): NodeJS.ReadableStream {
  const excluded = compileExclude(opts.exclude);
  const limits = resolveLimits(opts.limits);
  return tarStream(
    async () => selectSalvageEntries(root, await walkWorkspace(root, excluded), limits),
    { hardLinks: "copy" },
  );
}

/** Looks into the workspace with lstat/readlink only. Callers only ask about paths whose parents were already seen to be real directories, so the kernel never follows a link either. */
function diskLookup(root: string): (components: readonly string[]) => Promise<LinkLookup> {
  const cache = new Map<string, Promise<LinkLookup>>();
  return (components) => {
    const key = components.join("/");
    let found = cache.get(key);
    if (!found) {
      found = (async (): Promise<LinkLookup> => {
        try {
          const stats = await lstat(join(root, ...components));
          if (!stats.isSymbolicLink()) return { kind: "other" };
          return { kind: "symlink", target: await readlink(join(root, ...components)) };
        } catch (error) {
          const errno = errnoOf(error);
          if (errno === "ENOENT" || errno === "ENOTDIR") return { kind: "missing" };
          throw new WorkspaceExportError("a link could not be resolved", key, errno);
        }
      })();
      cache.set(key, found);
    }
    return found;
  };
}

export async function selectSalvageEntries(
  root: string,
  entries: readonly WorkspaceEntry[],
  limits: ArchiveLimits,
): Promise<WorkspaceEntry[]> {
  const onDisk = diskLookup(root);
  let links: WorkspaceEntry[] = [];
  for (const entry of entries) {
    if (entry.kind !== "symlink") continue;
    const target = entry.target ?? "";
    if (target === "" || checkLinkTarget(entry.path, target, limits)) continue;
    const parent = entry.path.split("/").slice(0, -1);
    const resolved = await resolveLinkTarget(parent, target, onDisk);
    if (resolved.kind === "inside") links.push(entry);
  }
  // The validator resolves through the archive's links only (an omitted link looks like a plain
  // directory to it), so re-check in its terms until nothing more drops out.
  for (;;) {
    const byKey = new Map(links.map((l) => [linkLookupKey(l.path, limits), l.target as string]));
    const inArchive = (components: readonly string[]): LinkLookup => {
      const target = byKey.get(linkLookupKey(components.join("/"), limits));
      return target === undefined ? { kind: "other" } : { kind: "symlink", target };
    };
    const kept: WorkspaceEntry[] = [];
    for (const link of links) {
      const parent = link.path.split("/").slice(0, -1);
      if ((await resolveLinkTarget(parent, link.target as string, inArchive)).kind === "inside")
        kept.push(link);
    }
    if (kept.length === links.length) break;
    links = kept;
  }
  const keptLinks = new Set(links);
  return entries.filter((e) => e.kind === "directory" || e.kind === "file" || keptLinks.has(e));
}
