export { mergeSnapshot } from "./merge-snapshot";
export type {
  MergeOutcome,
  MergeHooks,
  MergeLockProvider,
  MergeSeams,
  MergeSnapshotOptions,
} from "./types";
export {
  MergeConflictError,
  CopybackWriteError,
  MergeInputError,
  type MergeConflict,
  type MergeConflictKind,
  type MergeInputErrorCode,
} from "./errors";
export {
  classifyCopybackFailure,
  type CopybackFailureClass,
  type CopybackFailureReason,
} from "./classify";
export {
  runWithCopybackRetries,
  MAX_COPYBACK_ATTEMPTS,
  type CopybackRetryOptions,
} from "./retries";
export { realFsOps, type FsOps } from "./fs-ops";
export { planMerge, sandboxChanges, type MergePlan, type PlanResult } from "./plan";
export { probeHost, type HostProbe, type HostProbeRequest, type HostState } from "./host-probe";
export { cleanStrayTemporaries, isTemporaryName, TEMPORARY_PREFIX } from "./temporaries";
