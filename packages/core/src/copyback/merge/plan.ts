// The three-way merge plan: pure, no I/O. Inputs are the baseline B (taken when the sandbox was
// seeded), the snapshot S (what the sandbox returned) and the host state H read now.
//
// Per path p (entries compared with entriesEqual):
//   S left p as in B         -> the host keeps whatever it has (H)
//   S changed p, H did not   -> S is applied
//   both changed, H equals S -> nothing to do (an identical change is not a conflict)
//   both changed differently -> conflict "both_changed"
// The result must be a tree: every entry's parent a directory. Where it is not, the merge would
// delete host entries it does not own (a removed or replaced directory holding host-created
// entries), write below a host symlink, or write into a directory the host removed: conflicts.
// Excluded host entries are never deleted: a directory the sandbox removed that holds them is
// kept (with its host mode); one the sandbox replaced by a file or link is a conflict.
import { entriesEqual } from "../manifest/equal";
import { comparePaths, depthOf, parentOf } from "../manifest/paths";
import { SortedEntryIndex } from "../manifest/sorted-index";
import type { ManifestEntry } from "../manifest/types";
import type { MergeConflict } from "./errors";
import type { HostState } from "./host-probe";

export type Entries = ReadonlyMap<string, ManifestEntry>;

export interface RemoveOp {
  path: string;
  type: ManifestEntry["type"];
}
export interface DirectoryOp {
  path: string;
  mode: number;
}
export type WriteOp =
  { kind: "file"; path: string; mode: number } | { kind: "symlink"; path: string; target: string };

export interface MergePlan {
  /** Host entries to remove, deepest first (files and links unlinked, emptied directories removed). */
  removals: RemoveOp[];
  /** Directories to create, parents first. */
  directories: DirectoryOp[];
  /** Files and links to (re)write from the snapshot, each through a temporary and a rename. */
  writes: WriteOp[];
  /** Final directory modes (created and mode-changed directories), deepest first. */
  modes: DirectoryOp[];
  written: string[];
  deleted: string[];
}

export type PlanResult =
  { kind: "conflicts"; conflicts: MergeConflict[] } | { kind: "plan"; plan: MergePlan };

/** Paths the sandbox changed, and the directories among them it removed or replaced. */
export function sandboxChanges(
  baseline: Entries,
  snapshot: Entries,
): { changed: string[]; removedDirectories: string[] } {
  const changed: string[] = [];
  const removedDirectories: string[] = [];
  if (baseline instanceof SortedEntryIndex && snapshot instanceof SortedEntryIndex) {
    // Both sorted: one merge pass over the two entry arrays, already in path order.
    const bs = baseline.sorted;
    const ss = snapshot.sorted;
    let i = 0;
    let j = 0;
    while (i < bs.length || j < ss.length) {
      const b = bs[i];
      const s = ss[j];
      if (s === undefined || (b !== undefined && b.path < s.path)) {
        changed.push((b as ManifestEntry).path);
        if (b?.type === "directory") removedDirectories.push(b.path);
        i++;
      } else if (b === undefined || s.path < b.path) {
        changed.push(s.path);
        j++;
      } else {
        if (!entriesEqual(b, s)) {
          changed.push(b.path);
          if (b.type === "directory" && s.type !== "directory") removedDirectories.push(b.path);
        }
        i++;
        j++;
      }
    }
    return { changed, removedDirectories };
  }
  // Every baseline path, then the snapshot's new ones: no union of both key sets is built.
  for (const [p, b] of baseline) {
    const s = snapshot.get(p);
    if (entriesEqual(b, s)) continue;
    changed.push(p);
    if (b.type === "directory" && s?.type !== "directory") removedDirectories.push(p);
  }
  for (const p of snapshot.keys()) if (!baseline.has(p)) changed.push(p);
  return {
    changed: changed.sort(comparePaths),
    removedDirectories: removedDirectories.sort(comparePaths),
  };
}

/** A host file must be hashed only if a file it is compared with could have the same bytes. */
export function hashNeeded(
  baseline: Entries,
  snapshot: Entries,
): (path: string, size: number) => boolean {
  return (p, size) =>
    [baseline.get(p), snapshot.get(p)].some(
      (entry) => entry?.type === "file" && (entry.size === undefined || entry.size === size),
    );
}

type Source = "host" | "sandbox" | "preserved" | "conflict";
/**
 * Where each path's final entry comes from. Only the source is kept per path (at
 * 200,000 entries an object per path was about 10 MiB more of the merge's peak): the entry itself
 * is the host's ("host", "preserved"), the snapshot's ("sandbox"), or none ("conflict").
 */
class FinalSources {
  readonly #sources = new Map<string, Source>();

  constructor(
    private readonly snapshot: Entries,
    private readonly host: HostState,
  ) {}

  set(path: string, source: Source): void {
    this.#sources.set(path, source);
  }

  source(path: string): Source | undefined {
    return this.#sources.get(path);
  }

  /** The path's final entry; undefined for an absent entry, a conflict, or an unknown path. */
  entry(path: string): ManifestEntry | undefined {
    const source = this.#sources.get(path);
    if (source === "sandbox") return this.snapshot.get(path);
    if (source === "host" || source === "preserved") return this.host.entries.get(path);
    return undefined;
  }
}

export function planMerge(baseline: Entries, snapshot: Entries, host: HostState): PlanResult {
  const conflicts: MergeConflict[] = [];
  const final = new FinalSources(snapshot, host);
  const paths = [...host.known].sort(comparePaths);

  for (const p of paths) {
    const b = baseline.get(p);
    const s = snapshot.get(p);
    const h = host.entries.get(p);
    if (entriesEqual(b, s)) final.set(p, "host");
    else if (entriesEqual(b, h)) final.set(p, "sandbox");
    else if (entriesEqual(h, s)) final.set(p, "host");
    else {
      final.set(p, "conflict");
      conflicts.push({
        path: p,
        kind: "both_changed",
        detail: `changed on the host (${describe(b, h)}) and in the sandbox (${describe(b, s)})`,
      });
    }
  }

  // Excluded host entries stay: keep the directories that hold them.
  for (const dir of host.excludedIn) {
    for (let a = dir; a !== ""; a = parentOf(a)) {
      const source = final.source(a);
      const entry = final.entry(a);
      if (source === undefined || source === "conflict" || entry?.type === "directory") break;
      const h = host.entries.get(a);
      if (entry === undefined && h?.type === "directory") {
        final.set(a, "preserved");
        continue;
      }
      conflicts.push({
        path: a,
        kind: "excluded_entry_in_replaced_directory",
        detail: "the sandbox replaced a directory that holds excluded host entries",
      });
      break;
    }
  }

  // The result must be a tree. Report the topmost offender of each broken subtree only.
  const broken = new Set<string>();
  for (const p of paths) {
    if (final.entry(p) === undefined) continue;
    const parent = parentOf(p);
    if (parent === "") continue;
    if (final.entry(parent)?.type === "directory") continue;
    broken.add(p);
    if (broken.has(parent) || final.source(parent) === "conflict") continue;
    if (final.source(p) !== "sandbox") {
      conflicts.push({
        path: p,
        kind: "host_entry_in_removed_directory",
        detail: "created on the host inside a directory the sandbox removed or replaced",
      });
    } else if (host.entries.get(parent)?.type === "symlink") {
      conflicts.push({
        path: p,
        kind: "write_below_host_symlink",
        detail: "the sandbox writes below a path that is a symlink on the host",
      });
    } else {
      conflicts.push({
        path: p,
        kind: "parent_changed_on_host",
        detail: "the sandbox writes into a directory the host removed or replaced",
      });
    }
  }
  if (conflicts.length > 0)
    return { kind: "conflicts", conflicts: conflicts.sort((x, y) => comparePaths(x.path, y.path)) };

  const plan: MergePlan = {
    removals: [],
    directories: [],
    writes: [],
    modes: [],
    written: [],
    deleted: [],
  };
  for (const p of paths) {
    if (final.source(p) !== "sandbox") continue;
    const h = host.entries.get(p);
    const s = snapshot.get(p);
    if (
      h !== undefined &&
      (s === undefined || (h.type === "directory") !== (s.type === "directory"))
    )
      plan.removals.push({ path: p, type: h.type });
    if (s === undefined) {
      if (h !== undefined) plan.deleted.push(p);
      continue;
    }
    plan.written.push(p);
    if (s.type === "directory") {
      if (h?.type !== "directory") plan.directories.push({ path: p, mode: s.mode });
      plan.modes.push({ path: p, mode: s.mode });
    } else if (s.type === "file") {
      plan.writes.push({ kind: "file", path: p, mode: s.mode });
    } else {
      plan.writes.push({ kind: "symlink", path: p, target: s.target ?? "" });
    }
  }
  const deepestFirst = (x: { path: string }, y: { path: string }): number =>
    depthOf(y.path) - depthOf(x.path) || comparePaths(x.path, y.path);
  plan.removals.sort(deepestFirst);
  plan.modes.sort(deepestFirst);
  return { kind: "plan", plan };
}

function describe(b: ManifestEntry | undefined, x: ManifestEntry | undefined): string {
  if (x === undefined) return "deleted";
  if (b === undefined) return `created as ${x.type}`;
  if (b.type !== x.type) return `${b.type} replaced by ${x.type}`;
  if (x.type === "directory") return "mode changed";
  if (x.type === "symlink") return "link target changed";
  return b.mode !== x.mode && b.sha256 === x.sha256 ? "mode changed" : "contents changed";
}
