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
  /** A symbolic link target longer than maxPathBytes (a bad link, like the three above). */
  "symlink_target_too_long",
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

/**
 * What a violation says about the export, for the export policy (finalization/export-policy.ts):
 *   confinement  the tree holds something that must not reach the host (an unsafe or
 *                unresolvable link, a path outside, a device, a hard link, a framing trick):
 *                the salvage export leaves such entries out, and omission is the last resort;
 *   transport    the stream did not arrive whole: the same export again may well succeed;
 *   limit        the tree itself is too large or cannot exist on the host as it is (an entry,
 *                size or path limit, a case or normalization collision): no second export
 *                changes that, and omitting it would drop every file silently.
 */
export type ViolationClass = "confinement" | "transport" | "limit";

const LIMIT_CODES: ReadonlySet<ArchiveViolationCode> = new Set([
  "too_many_entries",
  "entry_too_large",
  "total_too_large",
  "metadata_too_large",
  "compression_ratio",
  "path_too_deep",
  "path_too_long",
  "case_collision",
  "normalization_collision",
]);

export function violationClass(code: ArchiveViolationCode): ViolationClass {
  if (code === "truncated_archive") return "transport";
  return LIMIT_CODES.has(code) ? "limit" : "confinement";
}

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
