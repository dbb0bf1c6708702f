// The copyback's face to the console: its lock key, the recorded changed paths, the staging root.
export { finalizationLockKey } from "../finalization/finalization-owner";
export {
  MAX_RECORDED_PATHS,
  readFinalizeChanges,
  recordFinalizeChanges,
} from "../finalization/finalize-changes";
export { STAGING_ROOT_RELATIVE } from "../finalization/staging";
