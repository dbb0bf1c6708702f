import type { ArchiveViolation } from "./violations";

/**
 * The archive failed validation (R-UA-2) and nothing of it was extracted (R-UA-4). Never retried
 * (R-RR-1): the same bytes would be refused again.
 */
export class UnsafeArchiveError extends Error {
  readonly code = "unsafe_archive" as const;
  readonly retryable = false;
  readonly violations: ArchiveViolation[];

  constructor(violations: ArchiveViolation[]) {
    const codes = [...new Set(violations.map((v) => v.code))].join(", ");
    super(
      `unsafe archive rejected (${violations.length} violation(s): ${codes}); nothing was extracted`,
    );
    this.name = "UnsafeArchiveError";
    this.violations = violations;
  }
}

/** The extraction destination is not an existing, empty, real directory. Nothing was written. */
export class ArchiveDestinationError extends Error {
  readonly code = "archive_destination_invalid" as const;

  constructor(reason: string) {
    super(`archive destination refused: ${reason}`);
    this.name = "ArchiveDestinationError";
  }
}

/**
 * Extraction of a validated archive failed (I/O error, or the file changed after validation).
 * Whatever had been written was removed again; `errno` keeps the system error code without its
 * host-path-bearing message.
 */
export class ArchiveExtractionError extends Error {
  readonly code = "archive_extraction_failed" as const;
  readonly errno: string | undefined;

  constructor(reason: string, errno?: string) {
    super(`archive extraction failed: ${reason}`);
    this.name = "ArchiveExtractionError";
    this.errno = errno;
  }
}

/** The archive file itself could not be opened or read (an I/O failure, not a verdict on it). */
export class ArchiveReadError extends Error {
  readonly code = "archive_unreadable" as const;
  readonly errno: string | undefined;

  /** `cause`: the underlying failure (a stream's error keeps its code for the retry policy). */
  constructor(errno?: string, cause?: unknown) {
    super(
      `the archive file cannot be read${errno ? ` (${errno})` : ""}`,
      cause === undefined ? undefined : { cause },
    );
    this.name = "ArchiveReadError";
    this.errno = errno;
  }
}

/** A workspace export could not be produced; `path` is workspace-relative. */
export class WorkspaceExportError extends Error {
  readonly code = "workspace_export_failed" as const;
  readonly errno: string | undefined;
  readonly path: string;

  constructor(reason: string, path: string, errno?: string) {
    super(`workspace export failed: ${reason}${path ? ` (${path})` : ""}`);
    this.name = "WorkspaceExportError";
    this.path = path;
    this.errno = errno;
  }
}

/**
 * The export stream ended before its end-of-archive marker (R-RR-1): a transport failure, not a
 * verdict on the workspace. Nothing was extracted; the same export again may succeed, so it is
 * retried like a dropped transfer.
 */
export class ArchiveTruncatedError extends Error {
  readonly code = "workspace_export_truncated" as const;
  readonly retryable = true;
  readonly violations: ArchiveViolation[];

  constructor(violations: ArchiveViolation[]) {
    super("the workspace export stream ended early; nothing was extracted");
    this.name = "ArchiveTruncatedError";
    this.violations = violations;
  }
}

/**
 * The export is over an archive limit (entries, sizes, path depth or length) or holds paths that
 * collide on the host (case, Unicode normalization). Not an unsafe link: a second export would
 * be refused the same way and omitting it would drop every file silently, so it is a final
 * copyback failure (finalization/export-policy.ts names the limit in its failure code).
 */
export class ArchiveLimitError extends Error {
  readonly code = "archive_limit_exceeded" as const;
  readonly retryable = false;
  /** The limit or collision violations; `limitViolation` is the first of them. */
  readonly violations: ArchiveViolation[];

  constructor(violations: ArchiveViolation[]) {
    const codes = [...new Set(violations.map((v) => v.code))].join(", ");
    super(`the workspace export is over an archive limit (${codes}); nothing was extracted`);
    this.name = "ArchiveLimitError";
    this.violations = violations;
  }

  get limitViolation(): ArchiveViolation {
    return this.violations[0] as ArchiveViolation;
  }
}
