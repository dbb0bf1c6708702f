// How the CLI turns a thrown error into an exit status and a message. Pure policy: errors are
// recognised by their stable `code` (the engine's contract), never by message text.
import { errnoOf, isDomainError, messageOf, type DomainErrorKind } from "../errors";
import { EXIT, type ExitCode } from "./exit-codes";

/** An expected failure raised by the CLI itself (bad input, refused environment). */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    readonly exitCode: ExitCode,
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export interface DescribedFailure {
  exitCode: ExitCode;
  code: string;
  message: string;
  /** false: a bug or an unknown failure, worth a stack trace. */
  expected: boolean;
  details?: Record<string, unknown>;
}

/** Codes whose failure is the command's answer (1). */
const FAILED_CODES = new Set([
  "unsafe_archive",
  "merge_conflict",
  "copyback_write_failed",
  "archive_extraction_failed",
  "archive_destination_invalid",
  "merge_target_escape",
  "unsupported_entry",
  "workspace_export_failed",
  "provider_delta_mismatch",
]);

/** Codes that mean the command line or an input file is wrong (2). */
const USAGE_CODES = new Set([
  "invalid_manifest",
  "invalid_exclude",
  "manifest_root_invalid",
  "merge_target_invalid",
  "merge_snapshot_invalid",
  "target_not_directory",
  "target_dangling_symlink",
  "target_overlaps_lock_root",
  "invalid_lock_option",
  "input_unreadable",
  "archive_unreadable",
]);

/** Codes that mean the machine or the instance root is in the way (3). */
const ENVIRONMENT_CODES = new Set([
  "directory_merge_lock_timeout",
  "directory_merge_lock_aborted",
  "directory_merge_lock_not_held",
  "unsupported_lock_filesystem",
  "lock_root_symlink",
  "lock_root_not_directory",
  "lock_root_insecure",
  "lock_file_symlink",
  "lock_file_not_regular",
  "lock_file_hard_linked",
  "lock_file_replaced",
]);

/** Domain errors of the services (the web shell maps the same kinds to HTTP statuses). */
const DOMAIN_EXIT: Record<DomainErrorKind, ExitCode> = {
  conflict: EXIT.failed,
  not_found: EXIT.failed,
  forbidden: EXIT.failed,
  unauthenticated: EXIT.failed,
  invalid: EXIT.usage,
  too_large: EXIT.usage,
  unavailable: EXIT.environment,
};

/** errno codes of a filesystem call: an I/O failure of the command (1), except the ones below. */
const ERRNO = /^E[A-Z0-9]+$/;

export function describeFailure(error: unknown): DescribedFailure {
  if (error instanceof CliError) {
    return {
      exitCode: error.exitCode,
      code: error.code,
      message: error.message,
      expected: true,
      ...(error.details ? { details: error.details } : {}),
    };
  }
  if (isDomainError(error)) {
    // A service's refusal (a recovery action's 409 code, not_found): the command's answer.
    return {
      exitCode: DOMAIN_EXIT[error.kind],
      code: error.code,
      // The stable code first: it is what changed, and what scripts match on.
      message: `${error.code}: ${error.message}`,
      expected: true,
      ...(error.details ? { details: { ...error.details } } : {}),
    };
  }
  const message = messageOf(error);
  const code = errnoOf(error);
  if (code !== undefined) {
    if (FAILED_CODES.has(code)) return { exitCode: EXIT.failed, code, message, expected: true };
    if (USAGE_CODES.has(code)) return { exitCode: EXIT.usage, code, message, expected: true };
    if (ENVIRONMENT_CODES.has(code))
      return { exitCode: EXIT.environment, code, message, expected: true };
    if (ERRNO.test(code)) return { exitCode: EXIT.failed, code, message, expected: true };
  }
  return {
    exitCode: EXIT.failed,
    code: code ?? "unexpected_error",
    message,
    expected: false,
  };
}
