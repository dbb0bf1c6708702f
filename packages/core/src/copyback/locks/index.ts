// Directory-merge write locks (R-LK-1..R-LK-5) and the lock-filesystem check. The scheme is
// described at the top of directory-merge-lock.ts.
export { DEFAULT_LOCK_TIMEOUT_MS, DirectoryMergeLocks, type AcquireOptions, type DirectoryMergeLease, type DirectoryMergeLocksOptions } from "./directory-merge-lock";
export {
  LockAbortedError,
  LockPathError,
  LockTimeoutError,
  UnsupportedLockFilesystemError,
  type LockPathErrorCode,
  type LockTimeoutDiagnostics,
  type LockTimeoutReason,
} from "./errors";
export {
  assertLockableFilesystem,
  detectFilesystemType,
  findMountFor,
  parseMountInfo,
  untrustedLockingReason,
  type FilesystemInfo,
  type MountEntry,
} from "./filesystem";
export { LEGACY_UPGRADE_STEPS } from "./legacy-lock";
export { LOCK_ROOT_RELATIVE, canonicalTarget, hashTarget, lockFilesFor, type LockFiles } from "./lock-paths";
export { listLocks, type LegacyLockEntry, type ListLocksOptions, type LockListEntry, type LockListing, type LockState } from "./list-locks";
export { OWNER_SIDECAR_MAX_BYTES, parseOwnerSidecar, readOwnerSidecar, type OwnerRecord, type OwnerStatus } from "./owner-sidecar";
