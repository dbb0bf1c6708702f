// mergeSnapshot: brings a sandbox's returned workspace into the host directory under the
// target's directory-merge lock (R-LK-1..6). Order of work, all under the lock:
//   authorize hook -> snapshot manifest -> no delta? publish "unchanged", host never read (R-LK-6)
//   -> remove stray temporaries -> probe the host -> three-way plan -> conflicts? throw, nothing
//   written -> apply durably -> publish hook.
import { lstat } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { observeMerge } from "../../metrics/observe";
import { DEFAULT_FS_CONCURRENCY } from "../manifest/concurrency";
import { manifestsEqual } from "../manifest/equal";
import { sanitizeFsError } from "../manifest/errors";
import { compileExclude } from "../manifest/exclude";
import { parseManifest } from "../manifest/parse";
import { pathIndex } from "../manifest/sorted-index";
import { scanManifest } from "../manifest/take-manifest";
import type { Manifest } from "../manifest/types";
import { applyPlan } from "./apply";
import { canonicalDirectoryOf } from "./canonical-directory";
import { mergeBytes } from "./merge-bytes";
import { CopybackWriteError, MergeConflictError, MergeInputError } from "./errors";
import { realFsOps } from "./fs-ops";
import { probeHost } from "./host-probe";
import { hashNeeded, planMerge, sandboxChanges } from "./plan";
import { cleanStrayTemporaries } from "./temporaries";
import type { MergeOutcome, MergeSnapshotOptions } from "./types";

const DEFAULT_SYNCFS_THRESHOLD = 64;

export async function mergeSnapshot(opts: MergeSnapshotOptions): Promise<MergeOutcome> {
  // Metrics: each merge's duration and outcome, the bytes it wrote into the host and
  // the size of the snapshot it compared (from the supplied manifest; a scanned one is not sized).
  const started = performance.now();
  try {
    const outcome = await mergeSnapshotOnce(opts);
    observeMerge({ outcome: outcome.kind, seconds: (performance.now() - started) / 1000, ...mergeBytes(opts.snapshotManifest, outcome) });
    return outcome;
  } catch (error) {
    observeMerge({ outcome: error instanceof MergeConflictError ? "conflict" : "failed", seconds: (performance.now() - started) / 1000 });
    throw error;
  }
}

async function mergeSnapshotOnce(opts: MergeSnapshotOptions): Promise<MergeOutcome> {
  // Input checks first: bad input is refused before the lock is even taken.
  const excluded = compileExclude(opts.exclude);
  const exclude = opts.exclude ?? [];
  // parseManifest returns a manifest it already validated as is (finalization's stored
  // baseline, the delta receive's snapshot): one parse per manifest per copyback.
  const withoutExcluded = (m: Manifest): Manifest =>
    exclude.length === 0
      ? m
      : { version: 1, entries: m.entries.filter((entry) => !excluded(entry.path)) };
  const baseline = withoutExcluded(parseManifest(opts.baseline));
  const suppliedSnapshot =
    opts.snapshotManifest === undefined
      ? undefined
      : withoutExcluded(parseManifest(opts.snapshotManifest));
  const targetReal = await canonicalDirectory(
    opts.target,
    "merge_target_invalid",
    "The merge target",
  );
  const snapshotReal = await canonicalDirectory(
    opts.snapshotDir,
    "merge_snapshot_invalid",
    "The snapshot directory",
  );
  if (contains(targetReal, snapshotReal) || contains(snapshotReal, targetReal)) {
    throw new MergeInputError(
      "merge_snapshot_invalid",
      "The snapshot directory and the merge target must not contain each other",
    );
  }
  const fsOps = opts.seams?.fsOps ?? realFsOps;
  const probe = opts.seams?.probeHost ?? probeHost;
  const cleanTemporaries = opts.seams?.cleanTemporaries ?? cleanStrayTemporaries;
  const concurrency = opts.concurrency ?? DEFAULT_FS_CONCURRENCY;
  const roots = [{ root: targetReal }, { root: snapshotReal, label: "snapshot" }];

  return opts.locks.withLock(targetReal, async () => {
    await opts.hooks?.authorize?.();

    let snapshot: Manifest;
    let snapshotExcludedIn: ReadonlySet<string> | undefined;
    if (suppliedSnapshot !== undefined) {
      snapshot = suppliedSnapshot;
      // Without a scan nothing is known about excluded entries in the snapshot, unless there
      // can be none.
      snapshotExcludedIn = exclude.length === 0 ? new Set() : undefined;
    } else {
      try {
        const scan = await scanManifest(snapshotReal, { exclude, concurrency });
        snapshot = scan.manifest;
        snapshotExcludedIn = scan.excludedIn;
      } catch (error) {
        throw sanitizeFsError(error, roots);
      }
    }

    // R-LK-6: every path, type, hash, mode and link target matches the baseline, so there is no
    // incoming delta. The host is not read at all, and concurrent host edits stay untouched.
    if (manifestsEqual(baseline, snapshot)) {
      const outcome: MergeOutcome = { kind: "unchanged" };
      await opts.hooks?.publish?.(outcome);
      return outcome;
    }

    const b = pathIndex(baseline);
    const s = pathIndex(snapshot);
    const changes = sandboxChanges(b, s);
    let planned;
    try {
      await cleanTemporaries(targetReal, excluded, fsOps);
      const host = await probe({
        targetReal,
        paths: changes.changed,
        removedDirectories: changes.removedDirectories,
        needsHash: hashNeeded(b, s),
        excluded,
        concurrency,
      });
      planned = planMerge(b, s, host);
    } catch (error) {
      throw sanitizeFsError(error, roots);
    }
    if (planned.kind === "conflicts") throw new MergeConflictError(planned.conflicts);
    const plan = planned.plan;

    const progress = { hostWritesBegan: false };
    try {
      await applyPlan(plan, {
        targetReal,
        snapshotReal,
        fsOps,
        concurrency,
        snapshot: s,
        snapshotExcludedIn,
        consumeSnapshot:
          opts.consumeSnapshot === true && (await sameFilesystem(targetReal, snapshotReal)),
        syncfsThreshold: opts.seams?.syncfsThreshold ?? DEFAULT_SYNCFS_THRESHOLD,
        progress,
      });
    } catch (error) {
      const clean = sanitizeFsError(error, roots);
      // R-RR-1: once a host file may have changed, the failure is final.
      throw progress.hostWritesBegan ? new CopybackWriteError(clean, "apply") : clean;
    }

    const outcome: MergeOutcome = { kind: "applied", written: plan.written, deleted: plan.deleted };
    try {
      await opts.hooks?.publish?.(outcome);
    } catch (error) {
      throw progress.hostWritesBegan ? new CopybackWriteError(error, "publish") : error;
    }
    return outcome;
  });
}

async function canonicalDirectory(
  dir: string,
  code: "merge_target_invalid" | "merge_snapshot_invalid",
  what: string,
): Promise<string> {
  const real = await canonicalDirectoryOf(dir);
  // Reported without the path (R-UA-4).
  if (real !== null) return real;
  throw new MergeInputError(code, `${what} does not exist or is not a directory`);
}

async function sameFilesystem(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([lstat(a), lstat(b)]);
  return x.dev === y.dev;
}

/** True when `inner` is `outer` or lies below it. */
function contains(outer: string, inner: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === "" || (rel !== ".." && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}
