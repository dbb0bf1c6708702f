// What happens to an exported archive (R-UA-2, R-UA-3, R-UA-4, R-RR-1), as pure decisions. One
// policy for the live path and the restart finalizer (R-UA-4). Each rejection is judged by the
// class of its violations (copyback/archive/violations.ts violationClass):
//   safe                                  -> extract it
//   truncated (transport)                 -> a transport failure: the try fails before any host
//                                            write and is retried in process (R-RR-1), then left
//                                            retryable like any transient failure
//   an unsafe entry, primary export       -> ask the provider for one salvage export (if it can
//                                            make one): it leaves exactly such entries out
//   over a limit, or colliding paths      -> a terminal copyback failure whose code names the limit
//                                            (EXPORT_LIMIT_FAILURE_CODES), never an omission: a
//                                            second export cannot change it, and omitting would
//                                            drop every file of the task silently; the run
//                                            is held: its lease pinned and a board action
//                                            naming the limit (held-export-failure.ts)
//   unsafe still / no salvage             -> omit: discard the export, log `workspace_export_omitted`
//                                            at info, and complete with the accepted result
//                                            (R-UA-3: no warning, no recovery action, no turn)
// So an unsafe link never fails a completed task (R-UA-1). An archive is never extracted before
// it was validated (R-UA-4); extraction itself validates first, so "rejected" is what it reports.
import { ArchiveLimitError } from "../copyback/archive/errors";
import { DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from "../copyback/archive/limits";
import { SALVAGE_INFO_MESSAGE } from "../copyback/archive/salvage";
import { violationClass, type ArchiveViolation, type ArchiveViolationCode } from "../copyback/archive/violations";

export type ExportStage = "primary" | "salvage";

export type ExportDecision =
  | { kind: "extract" }
  | { kind: "salvage" }
  | { kind: "omit" }
  /** R-RR-1: the stream did not arrive whole; retried like a dropped transfer. */
  | { kind: "transport_failure" }
  /** Over a limit or colliding: terminal, with the limit named (exportLimitFailure). */
  | { kind: "limit_failure"; violations: ArchiveViolation[] };

export interface ExportVerdict {
  stage: ExportStage;
  verdict: "safe" | "rejected";
  /** The rejection's violations (ignored when safe). */
  violations: readonly ArchiveViolation[];
  /** The plugin advertises `salvageExport`. */
  salvageAvailable: boolean;
}

export function decideExport(input: ExportVerdict): ExportDecision {
  if (input.verdict === "safe") return { kind: "extract" };
  const classes = new Set(input.violations.map((v) => violationClass(v.code)));
  // A stream that stopped early says nothing reliable about the workspace.
  if (classes.has("transport")) return { kind: "transport_failure" };
  // R-UA-2: exactly one salvage export, only after the primary one was rejected, and only when
  // it can help: it leaves unsafe entries out, it cannot shrink a tree or rename a path. (A
  // rejection without a known violation is treated as unsafe.)
  const unsafe = classes.has("confinement") || classes.size === 0;
  if (input.stage === "primary" && input.salvageAvailable && unsafe) return { kind: "salvage" };
  if (classes.has("limit")) {
    return { kind: "limit_failure", violations: input.violations.filter((v) => violationClass(v.code) === "limit") };
  }
  return { kind: "omit" };
}

/** The stable terminal failure code of each limit or collision: it names the limit. */
export const EXPORT_LIMIT_FAILURE_CODES = {
  too_many_entries: "native_workspace_sync_out_too_many_entries",
  entry_too_large: "native_workspace_sync_out_entry_too_large",
  total_too_large: "native_workspace_sync_out_total_too_large",
  metadata_too_large: "native_workspace_sync_out_metadata_too_large",
  compression_ratio: "native_workspace_sync_out_compression_ratio",
  path_too_deep: "native_workspace_sync_out_path_too_deep",
  path_too_long: "native_workspace_sync_out_path_too_long",
  case_collision: "native_workspace_sync_out_case_collision",
  normalization_collision: "native_workspace_sync_out_normalization_collision",
} as const satisfies Partial<Record<ArchiveViolationCode, string>>;

export type ExportLimitViolation = keyof typeof EXPORT_LIMIT_FAILURE_CODES;
export type ExportLimitFailureCode = (typeof EXPORT_LIMIT_FAILURE_CODES)[ExportLimitViolation];

/** Which archive limit (limits.ts) each violation crosses; collisions cross none. */
const LIMIT_OF: Record<ExportLimitViolation, keyof ArchiveLimits | null> = {
  too_many_entries: "maxEntries",
  entry_too_large: "maxEntryBytes",
  total_too_large: "maxTotalBytes",
  metadata_too_large: "maxMetadataBytes",
  compression_ratio: "maxCompressionRatio",
  path_too_deep: "maxPathDepth",
  // Either the whole path or one component; the detail text says which.
  path_too_long: "maxPathBytes",
  case_collision: "rejectCaseCollisions",
  normalization_collision: null,
};

/** The failure detail of a limit failure (stored on the coordinator; the recovery action reads it). */
export interface ExportLimitDetail {
  kind: "limit" | "collision";
  /** The archive violation code (too_many_entries, case_collision, ...). */
  violation: ExportLimitViolation;
  /** The ArchiveLimits key crossed, or null (normalization collisions). */
  limit: keyof ArchiveLimits | null;
  /** That limit's value (numbers only). */
  max: number | null;
  /** Archive-relative path of the first entry over the limit ("" for the archive as a whole); never a host path. */
  path: string;
  /** The validator's fixed wording (numbers, no host path). */
  message: string;
  /** Every limit violation code met, sorted. */
  violationCodes: ExportLimitViolation[];
}

export function isExportLimitViolation(code: ArchiveViolationCode): code is ExportLimitViolation {
  return Object.hasOwn(EXPORT_LIMIT_FAILURE_CODES, code);
}

/** The terminal code and detail of an archive over a limit (`violations`: at least one limit violation). */
export function exportLimitFailure(
  violations: readonly ArchiveViolation[],
  limits: Readonly<ArchiveLimits> = DEFAULT_ARCHIVE_LIMITS,
): { code: ExportLimitFailureCode; detail: ExportLimitDetail } {
  const found = violations.filter((v): v is ArchiveViolation & { code: ExportLimitViolation } => isExportLimitViolation(v.code));
  const first = found[0];
  if (!first) throw new TypeError("exportLimitFailure needs a limit violation");
  const limit = LIMIT_OF[first.code];
  const value = limit === null ? null : limits[limit];
  return {
    code: EXPORT_LIMIT_FAILURE_CODES[first.code],
    detail: {
      kind: first.code === "case_collision" || first.code === "normalization_collision" ? "collision" : "limit",
      violation: first.code,
      limit,
      max: typeof value === "number" ? value : null,
      path: first.path,
      message: first.detail,
      violationCodes: [...new Set(found.map((v) => v.code))].sort(),
    },
  };
}

/** The limit failure an export ended with (ArchiveLimitError anywhere in the cause chain), or null. */
export function exportLimitFailureOf(error: unknown): { code: ExportLimitFailureCode; detail: ExportLimitDetail } | null {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if (current instanceof ArchiveLimitError) return exportLimitFailure(current.violations);
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

/** At most this long, one line: a provider's informational message, not a report. */
const MAX_PROVIDER_MESSAGE = 200;

/**
 * The message that goes to the run log when a salvage export was used (R-UA-2). The provider's
 * fixed message when it is short, one line and names no path (R-UA-4: no host path or link
 * target may reach the informational event); the engine's fixed message otherwise.
 */
export function salvageLogMessage(providerMessage: string): string {
  const message = providerMessage.trim();
  const safe =
    message.length > 0 &&
    message.length <= MAX_PROVIDER_MESSAGE &&
    !/[\r\n\0/\\]/.test(message) &&
    !/\.\./.test(message);
  return safe ? message : SALVAGE_INFO_MESSAGE;
}

/** The fixed text of the `workspace_export_omitted` run event (no path, no link target). */
export const EXPORT_OMITTED_MESSAGE =
  "The workspace export was still unsafe after the salvage export; it was discarded and the accepted result was kept.";
