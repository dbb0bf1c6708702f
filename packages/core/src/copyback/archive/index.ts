// Safe archives for copyback (R-UA-2 to R-UA-4): export a workspace as tar, validate an archive
// before anything is extracted, extract only what was validated, and salvage an export whose
// first archive was rejected.
export { DEFAULT_ARCHIVE_LIMITS, type ArchiveLimits } from "./limits";
export { VIOLATION_CODES, type ArchiveViolation, type ArchiveViolationCode } from "./violations";
export {
  UnsafeArchiveError,
  ArchiveDestinationError,
  ArchiveExtractionError,
  ArchiveReadError,
  WorkspaceExportError,
} from "./errors";
export { validateArchive, type ArchiveValidation } from "./validate";
export { extractValidatedArchive, type ExtractOptions, type SafeArchive } from "./extract";
export { exportWorkspaceArchive, type WorkspaceExportOptions } from "./export";
export { exportSalvageArchive, SALVAGE_INFO_MESSAGE, type SalvageExportOptions } from "./salvage";
export {
  receiveWorkspaceArchive,
  type ReceiveWorkspaceArchiveOptions,
  type ReceivedWorkspaceArchive,
} from "./receive";
export { DEFAULT_SPOOL_MEMORY_BYTES, type SpoolOptions } from "./spool";
