// The records that outside packages read or write: recovery actions, causes, activity, receipts.
export {
  COPYBACK_FAILED_EVIDENCE_SCHEMA,
  openCopybackFailedAction,
  readCopybackFailedEvidence,
} from "../records/actions/copyback-failed";
export {
  EXPORT_LIMIT_EVIDENCE_SCHEMA,
  openExportLimitAction,
  readExportLimitEvidence,
} from "../records/actions/export-limit";
export {
  EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA,
  readExportRetryExhaustedEvidence,
} from "../records/actions/export-retry-exhausted";
export { CREDENTIALS_REFUSED_EVENT, lastCredentialRefusals, type CredentialRefusal } from "../records/credential-refusals";
export { openFileRecoveryAction, readFileRecoveryEvidence } from "../records/actions/file-recovery";
export { openPackVerificationUnavailableAction, readPackVerificationUnavailableEvidence } from "../records/actions/pack-verification-unavailable";
export { AGENT_PACK_VERIFICATION_KEY, AGENT_PACK_VERIFICATION_SCHEMA, readPackVerification } from "../records/agent-pack-verification";
export { readFilesGivenUp, recordFilesGivenUp } from "../records/actions/files-given-up";
export {
  openLegacyCopybackRepairAction,
  readLegacyRepairEvidence,
} from "../records/actions/legacy-copyback-repair";
export {
  isOpenRecoveryActionStatus,
  OPEN_RECOVERY_ACTION_STATUSES,
} from "../records/actions/open-statuses";
export { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "../records/actions/open-statuses-sql";
export {
  attestationTokenOf,
  openOwnerUnverifiedAction,
  OWNER_ATTESTATION_SCHEMA,
  OWNER_UNVERIFIED_EVIDENCE_SCHEMA,
  type OwnerUnverifiedEvidence,
  readOwnerUnverifiedEvidence,
  recordHarnessCheck,
} from "../records/actions/owner-unverified";
export { resolveOwnerHoldsOnCommit } from "../records/actions/owner-unverified-cleanup";
export {
  AGENT_OUTPUT_CODES,
  type AgentOutputLine,
  type AgentOutputTail,
  type AgentOutputTruncation,
  readAgentOutputTail,
  readAgentOutputTruncation,
  readAllAgentOutput,
} from "../records/agent-output";
export { hasAgentProcessRecord } from "../records/agent-process";
export {
  COPYBACK_FAILED_CAUSE,
  type CopybackFailureKind,
  EXPORT_LIMIT_CAUSE,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
  FILE_RECOVERY_CAUSE,
  LEGACY_COPYBACK_REPAIR_CAUSE,
  OWNER_UNVERIFIED_CAUSE,
  OWNER_UNVERIFIED_NEXT_ACTION,
  PACK_VERIFICATION_UNAVAILABLE_CAUSE,
} from "../records/causes";
export { FINALIZATION_PHASES, type FinalizationPhase } from "../records/coordinator-phases";
export {
  FINALIZATION_OWNER_KEY,
  type FinalizationOwnerReceipt,
  type UnverifiedReason,
} from "../records/finalization-owner-receipt";
export {
  type ActivityEntry,
  type Actor,
  recordActivity,
  SYSTEM_ACTOR,
} from "../records/record-activity";
export { RUN_RESULT_SCHEMA, runResultDocument } from "../records/result-document";
export { readStopAcknowledgement, readStopRetention } from "../records/run-stop-records";
export {
  STOPPED_EXECUTION_RECEIPT_KEY,
  STOPPED_EXECUTION_RECEIPT_SCHEMA,
} from "../records/stopped-execution-receipt";
