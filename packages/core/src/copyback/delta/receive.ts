// receiveDeltaArchive (host side): what the host does with a delta export before the merge.
//   1. The manifest is parsed (parseManifest), once: the result is frozen and validated, so the
//      merge it is handed to does not check it again. The baseline is the host's own (parsed
//      where finalization reads it); the merge runs parseManifest on it before any write (a
//      no-op for a manifest parseManifest returned).
//   2. The entries that differ from the baseline are computed here, from the manifest and the
//      host's own baseline: the sandbox's list is not trusted.
//   3. No difference: nothing is extracted (the merge then finds no delta, R-LK-6, and writes
//      nothing), and an archive must not have been sent.
//   4. Otherwise the manifest is checked as a whole tree with the archive's path and link
//      policy (tree-check.ts; a violation is an unsafe archive, R-UA-2), the archive is
//      validated and extracted into the (empty, private) staging directory by
//      extractValidatedArchive, and what landed there is compared with the manifest: every
//      changed entry present with the same type, mode, hash and link target, nothing else but
//      parent directories. A disagreement is DeltaMismatchError.
// The caller then runs mergeSnapshot({ snapshotDir: stagingDir, snapshotManifest, ... }): the
// merge sees the complete snapshot manifest and reads from staging only the entries it writes,
// which are exactly the changed ones.
import { extractValidatedArchive, type ExtractOptions } from "../archive/extract";
import { UnsafeArchiveError } from "../archive/errors";
import type { ArchiveLimits } from "../archive/limits";
import { entriesEqual, indexManifest } from "../manifest/equal";
import { compileExclude } from "../manifest/exclude";
import { parseManifest } from "../manifest/parse";
import { ancestorsOf } from "../manifest/paths";
import { takeManifest } from "../manifest/take-manifest";
import type { Manifest, ManifestEntry } from "../manifest/types";
import { diffManifests } from "./diff";
import { DeltaMismatchError } from "./errors";
import { checkManifestTree } from "./tree-check";
import type { DeltaReceipt } from "./types";

export interface ReceiveDeltaOptions extends PrepareDeltaOptions, ReceivePreparedOptions {}

export interface PrepareDeltaOptions {
  /** The snapshot manifest as received (untrusted JSON value). */
  manifest: unknown;
  baseline: Manifest;
  exclude?: readonly string[];
}

export interface ReceivePreparedOptions {
  /** The delta archive file, or null when the sandbox reported no change. */
  archive: string | null;
  /** An existing, empty, private directory. */
  stagingDir: string;
  limits?: Partial<ArchiveLimits>;
}

/** Steps 1 and 2: what the host itself finds changed, before any archive is read. */
export interface PreparedDelta {
  snapshot: Manifest;
  changed: ManifestEntry[];
  removed: string[];
}

export async function receiveDeltaArchive(opts: ReceiveDeltaOptions): Promise<DeltaReceipt> {
  return receivePreparedDelta(prepareDeltaReceipt(opts), opts);
}

/**
 * Steps 1 and 2 alone, for a caller that needs the changed entries before the archive arrives
 * (export-delta-snapshot.ts caps the spool by them); it then hands the result to
 * receivePreparedDelta, so the manifest is parsed and compared once.
 */
export function prepareDeltaReceipt(opts: PrepareDeltaOptions): PreparedDelta {
  const excluded = compileExclude(opts.exclude);
  const snapshot = parseManifest(opts.manifest);
  const excluding = (opts.exclude ?? []).length > 0;
  if (excluding && snapshot.entries.some((e) => excluded(e.path))) {
    throw new DeltaMismatchError("", "the manifest lists excluded entries");
  }
  const baseline: Manifest = excluding
    ? { version: 1, entries: opts.baseline.entries.filter((e) => !excluded(e.path)) }
    : opts.baseline;
  const { changed, removed } = diffManifests(baseline, snapshot);
  return { snapshot, changed, removed };
}

/** Steps 3 and 4 for a prepareDeltaReceipt result. */
export async function receivePreparedDelta(prepared: PreparedDelta, opts: ReceivePreparedOptions): Promise<DeltaReceipt> {
  const { snapshot, changed, removed } = prepared;
  const receipt: DeltaReceipt = {
    snapshotManifest: snapshot,
    changed: changed.map((e) => e.path),
    removed,
  };
  if (changed.length === 0) {
    // Strict both ways: an archive with nothing to carry is as inconsistent as a missing one.
    if (opts.archive !== null)
      throw new DeltaMismatchError("", "an archive was sent although nothing changed");
    return receipt;
  }
  if (opts.archive === null)
    throw new DeltaMismatchError("", "entries changed but no archive was sent");
  const violations = await checkManifestTree(snapshot, opts.limits);
  if (violations.length > 0) throw new UnsafeArchiveError(violations);

  const extractOpts: ExtractOptions = opts.limits ? { limits: opts.limits } : {};
  await extractValidatedArchive(opts.archive, opts.stagingDir, extractOpts);
  const staged = indexManifest(await takeManifest(opts.stagingDir));
  const wanted = new Set<string>();
  for (const entry of changed) {
    wanted.add(entry.path);
    const got = staged.get(entry.path);
    if (!entriesEqual(got, entry)) {
      throw new DeltaMismatchError(
        entry.path,
        got === undefined
          ? "the archive lacks this changed entry"
          : `the archive's ${got.type} differs from the manifest`,
      );
    }
  }
  const parents = new Set(changed.flatMap((e) => ancestorsOf(e.path)));
  for (const [p, entry] of staged) {
    if (wanted.has(p)) continue;
    // A parent of a changed entry is listed in the (validated) manifest as a directory, so the
    // manifest's type of p needs no index of all its entries.
    if (entry.type !== "directory" || !parents.has(p)) {
      throw new DeltaMismatchError(
        p,
        "the archive holds an entry the manifest does not list as changed",
      );
    }
  }
  return receipt;
}
