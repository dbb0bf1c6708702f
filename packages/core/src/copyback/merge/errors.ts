// Errors of the host merge. Every message names only workspace-relative paths (R-UA-4).

export type MergeConflictKind =
  /** The host and the sandbox both changed the path since the baseline, differently. */
  | "both_changed"
  /** The sandbox removed or replaced a directory in which the host created entries since the baseline. */
  | "host_entry_in_removed_directory"
  /** The sandbox replaced a directory that holds excluded host entries (which are never deleted). */
  | "excluded_entry_in_replaced_directory"
  /** The sandbox writes below a path that is a symlink on the host. */
  | "write_below_host_symlink"
  /** The sandbox writes into a directory the host removed or replaced with a file since the baseline. */
  | "parent_changed_on_host";

export interface MergeConflict {
  path: string;
  kind: MergeConflictKind;
  detail: string;
}

export class MergeConflictError extends Error {
  override readonly name = "MergeConflictError";
  readonly code = "merge_conflict" as const;
  constructor(readonly conflicts: MergeConflict[]) {
    super(
      `The sandbox changes conflict with host changes made since the baseline (${conflicts.length} conflict${conflicts.length === 1 ? "" : "s"}); nothing was written`,
    );
  }
}

/**
 * Any failure once the merge began changing host files. Never retried (R-RR-1): the host may
 * hold a mix of old and new files, so only an operator (or the next merge's preflight, which
 * sees those files as host changes) can decide what happens next.
 */
export class CopybackWriteError extends Error {
  override readonly name = "CopybackWriteError";
  readonly code = "copyback_write_failed" as const;
  readonly hostWritesBegan = true as const;
  readonly causeCode: string | undefined;
  constructor(cause: unknown, stage: "apply" | "publish") {
    const causeCode =
      typeof (cause as { code?: unknown } | null)?.code === "string"
        ? (cause as { code: string }).code
        : undefined;
    const what = cause instanceof Error ? cause.message : "unknown failure";
    super(`The merge failed after host writes began (${stage}): ${what}`, { cause });
    this.causeCode = causeCode;
  }
}

export type MergeInputErrorCode =
  "merge_target_invalid" | "merge_snapshot_invalid" | "merge_target_escape";

/** Bad input or a target that is not a plain directory: refused before anything is written. */
export class MergeInputError extends Error {
  override readonly name = "MergeInputError";
  constructor(
    readonly code: MergeInputErrorCode,
    message: string,
  ) {
    super(message);
  }
}
