import type { Manifest } from "../manifest/types";
import type { FsOps } from "./fs-ops";
import type { HostProbe } from "./host-probe";
import type { cleanStrayTemporaries } from "./temporaries";

export type MergeOutcome =
  { kind: "unchanged" } | { kind: "applied"; written: string[]; deleted: string[] };

export interface MergeHooks {
  /** Runs under the lock before anything is read or written (R-LK-6: also for an unchanged snapshot). */
  authorize?(): Promise<void>;
  /** Runs under the lock after the host is durable (R-LK-6: also for an unchanged snapshot). */
  publish?(outcome: MergeOutcome): Promise<void>;
}

/**
 * What the merge needs from the directory-merge locks (src/copyback/locks). Structural, so the
 * real `DirectoryMergeLocks` fits as is and tests can pass a small fake.
 */
export interface MergeLockProvider {
  withLock<T>(target: string, fn: (lease: { target: string }) => Promise<T>): Promise<T>;
}

/** Test seams: fault injection and call observation. Production code passes none. */
export interface MergeSeams {
  fsOps?: FsOps;
  probeHost?: HostProbe;
  cleanTemporaries?: typeof cleanStrayTemporaries;
  /** Above this many new files, one syncfs replaces per-file fsync (default 64). */
  syncfsThreshold?: number;
}

export interface MergeSnapshotOptions {
  /** The host workspace directory (canonicalized with realpath). */
  target: string;
  /** The manifest taken when the sandbox was seeded (validated with parseManifest). */
  baseline: Manifest;
  /** The extracted, validated snapshot of the sandbox workspace. */
  snapshotDir: string;
  locks: MergeLockProvider;
  /** Excluded trees (see manifest/exclude.ts); preserved on the host, never deleted. */
  exclude?: string[];
  hooks?: MergeHooks;
  /**
   * The snapshot directory is a private staging copy that may be consumed: new files are moved
   * (renamed) into the host instead of copied, when both are on one filesystem. Default false.
   */
  consumeSnapshot?: boolean;
  /**
   * The snapshot's manifest when the caller already has it (computed while extracting the
   * archive): the snapshot is then not read again. It must describe snapshotDir exactly.
   */
  snapshotManifest?: Manifest;
  /** Filesystem operations in flight at once (default 16). */
  concurrency?: number;
  seams?: MergeSeams;
}
