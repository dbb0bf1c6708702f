// Why an archive was refused. Codes are stable strings (callers and the operator CLI match on
// them); `path` is always archive-relative and `detail` is fixed wording plus numbers, so neither
// can carry a host path or a link target into a message a user sees (R-UA-4).

export const VIOLATION_CODES = [
  "absolute_path",
  "parent_traversal",
  "invalid_path",
  "through_symlink",
  "type_conflict",
  "symlink_escape",
  "absolute_symlink",
  "symlink_loop",
  "hard_link",
  "device",
  "fifo",
  "unsupported_type",
  "suspicious_pax_header",
  "duplicate_entry",
  "normalization_collision",
  "case_collision",
  "too_many_entries",
  "entry_too_large",
  "total_too_large",
  "path_too_deep",
  "path_too_long",
  "metadata_too_large",
  "compression_ratio",
  "truncated_archive",
  "malformed_archive",
] as const;

export type ArchiveViolationCode = (typeof VIOLATION_CODES)[number];

export interface ArchiveViolation {
  code: ArchiveViolationCode;
  /** Archive-relative entry path ("" for the archive as a whole); never a host path. */
  path: string;
  detail: string;
}

const MAX_REPORTED_PATH = 300;

/**
 * The entry path as it may be shown: leading slashes and drive letters dropped (an absolute
 * entry path names a host location, R-UA-4), control characters escaped, length bounded.
 */
export function reportablePath(raw: string): string {
  let p = raw.replace(/^(?:[A-Za-z]:)?[/\\]+/, "");
  p = Array.from(p, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, "0")}` : c;
  }).join("");
  if (p.length > MAX_REPORTED_PATH) p = `${p.slice(0, MAX_REPORTED_PATH)}…`;
  return p;
}

export function violation(
  code: ArchiveViolationCode,
  rawPath: string,
  detail: string,
): ArchiveViolation {
  return { code, path: reportablePath(rawPath), detail };
}
