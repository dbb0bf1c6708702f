// Errors of the directory-merge locks. Each carries a stable `code`. Messages never contain a
// host absolute path (R-UA-4): a lock timeout can end up in a task's failure reason, so it names
// the lock by its hash and relative file names only. Host paths, where an operator needs them,
// travel in `details` / `diagnostics`, which callers log but do not show to a task's user.
import { DomainError } from "../../errors";
import type { OwnerRecord } from "./owner-sidecar";

/** Why a waiter was still outside when its time ran out. */
export type LockTimeoutReason =
  /** Another connection held the SQLite reserved lock (R-LK-2). */
  | "held"
  /** A legacy `<hash>.lock/` directory blocks admission (R-LK-5). */
  | "legacy_lock_directory"
  /** Older live waiters were still queued ahead of this one (fairness queue). */
  | "queued";

export interface LockTimeoutDiagnostics {
  /** sha256 of the canonical target; names the lock files. */
  lockHash: string;
  reason: LockTimeoutReason;
  waitedMs: number;
  timeoutMs: number;
  /**
   * What the owner sidecar said, bounded and validated. Diagnostics only (R-LK-3): it is
   * reported, never believed; the target path is left out on purpose (R-UA-4).
   */
  owner: Omit<OwnerRecord, "target">;
  /** Relative name of the legacy directory when one blocks admission (R-LK-5). */
  legacyDirectory: string | null;
  /** Live waiters of other processes queued ahead at the last look (null: not queued). */
  waitersAhead: number | null;
}

export class LockTimeoutError extends DomainError {
  declare readonly code: "directory_merge_lock_timeout";
  readonly diagnostics: LockTimeoutDiagnostics;

  constructor(message: string, diagnostics: LockTimeoutDiagnostics) {
    super("unavailable", "directory_merge_lock_timeout", message, { diagnostics });
    this.name = "LockTimeoutError";
    this.diagnostics = diagnostics;
  }
}

export class LockAbortedError extends DomainError {
  declare readonly code: "directory_merge_lock_aborted";

  constructor(lockHash: string | null, cause: unknown) {
    super("unavailable", "directory_merge_lock_aborted", `Waiting for the directory-merge lock${lockHash ? ` ${shortHash(lockHash)}` : ""} was aborted.`, { lockHash });
    this.name = "LockAbortedError";
    this.cause = cause;
  }
}

/** Codes of refusals to use a lock root, lock file or target. */
export type LockPathErrorCode =
  | "lock_root_symlink"
  | "lock_root_not_directory"
  | "lock_root_insecure"
  | "lock_file_symlink"
  | "lock_file_not_regular"
  | "lock_file_hard_linked"
  | "lock_file_replaced"
  | "target_dangling_symlink"
  | "target_not_directory"
  | "target_overlaps_lock_root";

export class LockPathError extends DomainError {
  declare readonly code: LockPathErrorCode;

  constructor(code: LockPathErrorCode, message: string, details?: Record<string, unknown>) {
    super("invalid", code, message, details);
    this.name = "LockPathError";
  }
}

export class UnsupportedLockFilesystemError extends DomainError {
  declare readonly code: "unsupported_lock_filesystem";

  constructor(message: string, details: { fsType: string; mountPoint: string; path: string }) {
    super("invalid", "unsupported_lock_filesystem", message, details);
    this.name = "UnsupportedLockFilesystemError";
  }
}

export const shortHash = (hash: string) => hash.slice(0, 12);
