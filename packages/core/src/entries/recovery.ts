// Recovery: open actions, the task notice, the operator services, the reconciler and its sweeps.
export {
  listOpenActionsForCompany,
  listOpenActionsForIssue,
  noticeActionsOf,
  type OpenActionRow,
  openActionsByIssue,
  recoveryActionSelect,
  toNoticeAction,
} from "../recovery/holds";
export { attestOwnerStop, attestOwnerStopBody } from "../recovery/operator/attest-owner-stop";
export {
  attestationCall,
  exportRetryCall,
  fileHoldResolveCall,
  MAINTENANCE_SQL_TEMPLATE,
  maintenanceSql,
  REPAIR_NOTE_PLACEHOLDER,
  STOP_EVIDENCE_PLACEHOLDER,
} from "../recovery/operator/guidance";
export {
  reconstructWorkspace,
  type ReconstructWorkspaceInput,
} from "../recovery/operator/reconstruct-workspace";
export {
  resolveRecoveryAction,
  resolveRecoveryActionBody,
} from "../recovery/operator/resolve-recovery-action";
export {
  retryWorkspaceExport,
  retryWorkspaceExportBody,
  type RetryWorkspaceExportInput,
  type RetryWorkspaceExportResult,
} from "../recovery/operator/retry-workspace-export";
export { RESOLVABLE_CAUSES } from "../recovery/policies/decide-resolve";
export { Reconciler } from "../recovery/reconciler";
export { reconstructionContext } from "../recovery/reconstruction/authority";
export {
  reconstructWorkspaceBody,
  type ReconstructWorkspaceOutcome,
} from "../recovery/reconstruction/contract";
export { reconstructionOffer } from "../recovery/reconstruction/offer";
export { dueFinalizationsSql, finalizationSweep } from "../recovery/sweeps/finalization-sweep";
export { askHarness, type TenantHarnessConfig } from "../recovery/harness/harness-client";
export { takeOverWithHarness } from "../recovery/harness/harness-takeover";
export { harnessTakeoverSweep } from "../recovery/sweeps/harness-takeover-sweep";
export { historicalUnsafeSweep } from "../recovery/sweeps/historical-unsafe-sweep";
export { leaseCleanupSweep } from "../recovery/sweeps/lease-cleanup-sweep";
export { leftoverStagingSweep } from "../recovery/sweeps/leftover-staging-sweep";
export { orphanSweep } from "../recovery/sweeps/orphan-sweep";
export { ownerHoldsSweep } from "../recovery/sweeps/owner-holds-sweep";
export { reconstructionDeliverySweep } from "../recovery/sweeps/reconstruction-delivery-sweep";
export { settledRunLeasesSweep } from "../recovery/sweeps/settled-run-leases-sweep";
export { stopRetentionSweep } from "../recovery/sweeps/stop-retention-sweep";
export type { Sweep, SweepLog } from "../recovery/sweeps/sweep";
export {
  CONTINUING_MESSAGE,
  deferralMessage,
  deriveTaskNotice,
  FILES_GIVEN_UP_MESSAGE,
  type ReconstructionDeferral,
  RESTORING_MESSAGE,
  type TaskNotice,
} from "../recovery/task-notice";
