// R-RR-1: which copyback failures may be retried. A failure before any host write from a
// passing cause (a dropped transfer, a truncated or broken export stream, a provider error, a
// merge lock held by another restore) is retried; an unsafe archive, an archive over a limit, a
// permission failure, a merge conflict or anything after host writes began is final. Anything unrecognised is final too: retrying an unknown failure could
// repeat whatever harm it did.

export type CopybackFailureReason =
  | "after_host_writes"
  | "unsafe_archive"
  | "archive_limit"
  | "merge_conflict"
  | "permission_denied"
  | "transfer_dropped"
  | "provider_error"
  | "lock_timeout"
  | "staging_resources"
  | "unclassified";

export interface CopybackFailureClass {
  retryable: boolean;
  reason: CopybackFailureReason;
}

const TRANSFER_CODES = new Set([
  "transfer_dropped",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  // The export stream ended before its end-of-archive marker (ArchiveTruncatedError).
  "workspace_export_truncated",
  // The export stream failed while it was read (ArchiveReadError; a permission errno in its
  // cause chain is still final, see below).
  "archive_unreadable",
]);
const PERMISSION_CODES = new Set(["EACCES", "EPERM", "EROFS"]);
// The controller's own staging ran out (a full or over-quota instance root, no file descriptors)
// while it received the export, before any host write: the next try, with space freed, can
// succeed, so the accepted result must not be failed for it. The stored code stays the stable
// `archive_extraction_failed` (R-EX-1 names a copyback failure, never an inferred disk cause).
// SQLITE_FULL: the directory-merge lock's own database could not be written (the same full
// instance root), before the lock was held and so before any host write.
const STAGING_RESOURCE_ERRNOS = new Set(["ENOSPC", "EDQUOT", "EMFILE", "ENFILE", "SQLITE_FULL"]);
const MAX_CAUSE_DEPTH = 8;

export function classifyCopybackFailure(error: unknown): CopybackFailureClass {
  const chain = causeChain(error);
  // Final reasons win wherever they appear in the chain: a provider error that wraps an
  // unsafe-archive rejection is still an unsafe archive.
  if (chain.some((e) => e.hostWritesBegan === true))
    return { retryable: false, reason: "after_host_writes" };
  const codes = chain.map((e) => e.code).filter((code): code is string => typeof code === "string");
  if (codes.includes("unsafe_archive")) return { retryable: false, reason: "unsafe_archive" };
  if (codes.includes("archive_limit_exceeded")) return { retryable: false, reason: "archive_limit" };
  if (codes.includes("merge_conflict")) return { retryable: false, reason: "merge_conflict" };
  if (codes.some((code) => PERMISSION_CODES.has(code)))
    return { retryable: false, reason: "permission_denied" };
  if (codes.includes("directory_merge_lock_timeout"))
    return { retryable: true, reason: "lock_timeout" };
  const errnos = chain.map((e) => e.errno).filter((errno): errno is string => typeof errno === "string");
  if ([...codes, ...errnos].some((code) => STAGING_RESOURCE_ERRNOS.has(code)))
    return { retryable: true, reason: "staging_resources" };
  if (codes.some((code) => TRANSFER_CODES.has(code)))
    return { retryable: true, reason: "transfer_dropped" };
  if (codes.some((code) => code.startsWith("provider_")))
    return { retryable: true, reason: "provider_error" };
  return { retryable: false, reason: "unclassified" };
}

function causeChain(error: unknown): { code?: unknown; errno?: unknown; hostWritesBegan?: unknown }[] {
  const chain: { code?: unknown; errno?: unknown; hostWritesBegan?: unknown }[] = [];
  let current: unknown = error;
  while (
    typeof current === "object" &&
    current !== null &&
    chain.length < MAX_CAUSE_DEPTH &&
    !chain.includes(current)
  ) {
    chain.push(current);
    current = (current as { cause?: unknown }).cause;
  }
  return chain;
}
