// Applies a conflict-free plan to the host, under the directory-merge lock.
//
// Crash safety: no host file is ever written in place. Each new file, link or directory is
// first created as a `.copyback-tmp-*` temporary in its final directory (or, when the snapshot
// may be consumed, is the snapshot entry itself on the same filesystem) and then renamed over
// its path; rename(2) replaces the name atomically, so a crash leaves every path with its old or
// its new entry, plus at worst a temporary that the next merge removes. The one unavoidable
// exception is a path that changes between directory and non-directory: POSIX has no atomic
// exchange of the two, so such a path is briefly absent between removal and creation.
//
// Durability (the benchmark compares with `tar | tar && sync`): file data reaches the disk
// before any name points at it (data barrier), and every changed directory is flushed before
// the merge reports success (name barrier). For a few files the barriers are fsync(2) of each
// staged file and each changed directory; for many, a single syncfs(2) of the target's
// filesystem does the same work in one flush, like `sync` does for tar.
import path from "node:path";
import { runPool } from "../manifest/concurrency";
import { ancestorsOf, depthOf, parentOf } from "../manifest/paths";
import { MergeInputError } from "./errors";
import type { FsOps } from "./fs-ops";
import type { DirectoryOp, Entries, MergePlan, RemoveOp, WriteOp } from "./plan";
import { temporaryName } from "./temporaries";

export interface ApplyContext {
  targetReal: string;
  snapshotReal: string;
  fsOps: FsOps;
  concurrency: number;
  /** Move snapshot entries into place instead of copying (caller checked: same filesystem). */
  consumeSnapshot: boolean;
  /** The snapshot's entries, and where it holds excluded entries (undefined: unknown). */
  snapshot: Entries;
  snapshotExcludedIn: ReadonlySet<string> | undefined;
  syncfsThreshold: number;
  /** Set to true just before the first host mutation (drives R-RR-1 classification). */
  progress: { hostWritesBegan: boolean };
}

interface Staged {
  staged: string;
  final: string;
  parent: string;
}

export async function applyPlan(plan: MergePlan, ctx: ApplyContext): Promise<void> {
  const { targetReal, concurrency } = ctx;
  const ops = trackWrites(ctx.fsOps, ctx.progress);
  const hostPath = (rel: string): string =>
    rel === "" ? targetReal : path.join(targetReal, ...rel.split("/"));
  const snapshotPath = (rel: string): string => path.join(ctx.snapshotReal, ...rel.split("/"));
  const dirty = new Set<string>();

  // Writes never leave the target: each directory written into must resolve to where the plan
  // expects it. The probe already refused host links on the way; this re-checks at write time.
  const checked = new Map<string, Promise<void>>();
  const checkDirectory = (rel: string): Promise<void> => {
    let pending = checked.get(rel);
    if (pending === undefined) {
      pending = (async () => {
        const real = await ops.realpath(hostPath(rel));
        if (real !== hostPath(rel)) {
          throw new MergeInputError(
            "merge_target_escape",
            `The host directory ${JSON.stringify(rel || ".")} no longer resolves inside the target`,
          );
        }
      })();
      checked.set(rel, pending);
    }
    return pending;
  };

  const moves = ctx.consumeSnapshot
    ? movableSubtrees(plan, ctx.snapshotExcludedIn)
    : new Set<string>();
  const moved = (p: string): boolean =>
    moves.size > 0 && (moves.has(p) || ancestorsOf(p).some((a) => moves.has(a)));
  const directories = plan.directories.filter((op) => !moved(op.path));
  const writes = plan.writes.filter((op) => !moved(op.path));

  // 1. Removals, deepest first (a directory is empty once its removed children are gone).
  for (const level of byDepth(plan.removals, "deepest")) {
    await runPool(level, concurrency, async (op: RemoveOp) => {
      const parent = parentOf(op.path);
      await checkDirectory(parent);
      if (op.type === "directory") await ops.rmdir(hostPath(op.path));
      else await ops.unlink(hostPath(op.path));
      dirty.add(parent);
    });
  }

  // 2. New directories, parents first. Each is made as a temporary, given its mode and renamed
  //    into place, so it appears whole with its final mode (a crash never leaves a directory
  //    with a half-set mode, which the next merge would see as a host change). A mode without
  //    owner rwx would stop us writing into it: such a directory gets its final mode in step 5,
  //    so a crash before then leaves it with owner rwx added (the next merge reports it).
  for (const level of byDepth(directories, "shallowest")) {
    await runPool(level, concurrency, async (op: DirectoryOp) => {
      const parent = parentOf(op.path);
      await checkDirectory(parent);
      const temp = path.join(hostPath(parent), temporaryName());
      await ops.mkdir(temp, 0o700);
      await ops.chmod(temp, op.mode | 0o700);
      await ops.rename(temp, hostPath(op.path));
      dirty.add(parent);
      dirty.add(op.path);
    });
  }

  // 3. Stage every file and link beside its final name; a whole new subtree of a consumable
  //    snapshot is staged where it is and published by one rename of its root.
  const fileCount = plan.writes.filter((w) => w.kind === "file").length;
  let perFileSync = fileCount <= ctx.syncfsThreshold;
  const staged: Staged[] = [];
  const stagedFiles: string[] = [];
  await runPool(writes, concurrency, async (op: WriteOp) => {
    const parent = parentOf(op.path);
    await checkDirectory(parent);
    const final = hostPath(op.path);
    if (op.kind === "symlink") {
      const temp = path.join(hostPath(parent), temporaryName());
      await ops.symlink(op.target, temp);
      staged.push({ staged: temp, final, parent });
      return;
    }
    let file: string;
    if (ctx.consumeSnapshot) {
      file = snapshotPath(op.path);
    } else {
      file = path.join(hostPath(parent), temporaryName());
      await ops.copyFile(snapshotPath(op.path), file);
    }
    await ops.chmod(file, op.mode);
    if (perFileSync) await ops.fsyncFile(file);
    staged.push({ staged: file, final, parent });
    stagedFiles.push(file);
  });
  for (const root of moves) {
    const parent = parentOf(root);
    await checkDirectory(parent);
    await ops.chmod(snapshotPath(root), ctx.snapshot.get(root)?.mode ?? 0o755);
    staged.push({ staged: snapshotPath(root), final: hostPath(root), parent });
  }
  // The moved subtrees' files and directories, listed only when they are fsynced one by one:
  // with the syncfs barrier, 200,000 absolute paths would only be held.
  const movedEntries = (): { files: string[]; directories: string[] } => {
    const files: string[] = [];
    const directories: string[] = [];
    if (moves.size > 0) {
      for (const [p, entry] of ctx.snapshot) {
        if (!moved(p)) continue;
        if (entry.type === "file") files.push(snapshotPath(p));
        if (entry.type === "directory") directories.push(snapshotPath(p));
      }
    }
    return { files, directories };
  };
  if (perFileSync) {
    const movedNow = movedEntries();
    await syncEach(movedNow.files, movedNow.directories);
  }

  // Data barrier: no name may point at bytes (or a moved subtree at entries) not yet on disk.
  if (!perFileSync && !(await ops.syncFilesystem(targetReal))) {
    perFileSync = true;
    const movedNow = movedEntries();
    await syncEach([...stagedFiles, ...movedNow.files], movedNow.directories);
  }

  // 4. Publish each staged entry under its final name (atomic replacement).
  await runPool(staged, concurrency, async (entry) => {
    await ops.rename(entry.staged, entry.final);
    dirty.add(entry.parent);
  });

  // 5. Final directory modes, deepest first (a read-only parent is closed last): existing
  //    directories whose mode changed, and new ones whose mode lacks owner rwx.
  const created = new Set(plan.directories.map((op) => op.path));
  const modes = plan.modes.filter(
    (op) => !moved(op.path) && (!created.has(op.path) || (op.mode & 0o700) !== 0o700),
  );
  for (const level of byDepth(modes, "deepest")) {
    await runPool(level, concurrency, async (op: DirectoryOp) => {
      await checkDirectory(op.path);
      await ops.chmod(hostPath(op.path), op.mode);
      dirty.add(op.path);
    });
  }

  // Name barrier: every creation, rename, removal and mode change is durable before success.
  // (A removed directory's own changes need no flush: its removal from the parent is flushed.)
  for (const op of plan.removals)
    if (op.type === "directory" && !created.has(op.path)) dirty.delete(op.path);
  if (dirty.size === 0) return;
  if (dirty.size > ctx.syncfsThreshold && (await ops.syncFilesystem(targetReal))) return;
  await runPool([...dirty], concurrency, (rel) => ops.fsyncDir(hostPath(rel)));

  async function syncEach(files: readonly string[], dirs: readonly string[]): Promise<void> {
    await runPool(files, concurrency, (file) => ops.fsyncFile(file));
    await runPool(dirs, concurrency, (dir) => ops.fsyncDir(dir));
  }
}

/**
 * Roots of new directory subtrees that can move from a consumable snapshot as a whole: the
 * plan creates the directory (so it is absent on the host once removals ran, and every
 * snapshot entry below it is new too) and the snapshot holds nothing unlisted below it
 * (excluded entries must never reach the host). Topmost roots only.
 */
function movableSubtrees(
  plan: MergePlan,
  excludedIn: ReadonlySet<string> | undefined,
): Set<string> {
  const roots = new Set<string>();
  if (excludedIn === undefined) return roots;
  const tainted = new Set<string>();
  for (const dir of excludedIn) {
    tainted.add(dir);
    for (const ancestor of ancestorsOf(dir)) tainted.add(ancestor);
  }
  for (const op of plan.directories) {
    if (tainted.has(op.path) || ancestorsOf(op.path).some((a) => roots.has(a))) continue;
    roots.add(op.path);
  }
  return roots;
}

function byDepth<T extends { path: string }>(
  items: readonly T[],
  order: "deepest" | "shallowest",
): T[][] {
  const levels = new Map<number, T[]>();
  for (const item of items) {
    const depth = depthOf(item.path);
    let level = levels.get(depth);
    if (level === undefined) levels.set(depth, (level = []));
    level.push(item);
  }
  const depths = [...levels.keys()].sort((a, b) => (order === "deepest" ? b - a : a - b));
  return depths.map((depth) => levels.get(depth) ?? []);
}

/** Marks the first mutating call: from then on a failure must never be retried (R-RR-1). */
function trackWrites(ops: FsOps, progress: { hostWritesBegan: boolean }): FsOps {
  const mutating =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      progress.hostWritesBegan = true;
      return fn.apply(ops, args);
    };
  const reading =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      fn.apply(ops, args);
  return {
    copyFile: mutating(ops.copyFile),
    chmod: mutating(ops.chmod),
    fsyncFile: reading(ops.fsyncFile),
    fsyncDir: reading(ops.fsyncDir),
    syncFilesystem: reading(ops.syncFilesystem),
    rename: mutating(ops.rename),
    unlink: mutating(ops.unlink),
    rmdir: mutating(ops.rmdir),
    mkdir: mutating(ops.mkdir),
    symlink: mutating(ops.symlink),
    realpath: reading(ops.realpath),
  };
}
