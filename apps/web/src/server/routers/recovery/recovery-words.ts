// What a recovery action's recorded codes mean, in words for the people who read Recovery
// details. Written here, not copied from the evidence: the words never carry a process id or a
// host name (R-UI-1), whatever the receipt recorded.
import {
  COPYBACK_FAILED_CAUSE,
  EXPORT_LIMIT_CAUSE,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
  FILE_RECOVERY_CAUSE,
  LEGACY_COPYBACK_REPAIR_CAUSE,
  OWNER_UNVERIFIED_CAUSE,
  PACK_VERIFICATION_UNAVAILABLE_CAUSE,
  type CopybackFailureKind,
  type UnverifiedReason,
  type FinalizationPhase,
} from "@copyback/core/records";

const CAUSE_WORDS: Readonly<Record<string, string>> = {
  [OWNER_UNVERIFIED_CAUSE]: "Copyback owner could not be verified",
  legacy_workspace_copyback_failed: "Copy-back of the sandbox failed",
  [EXPORT_LIMIT_CAUSE]: "Copying the work back stopped at an archive limit",
  [LEGACY_COPYBACK_REPAIR_CAUSE]: "Legacy copy-back failed: files kept for repair",
  [FILE_RECOVERY_CAUSE]: "Run ended before its result: files kept for recovery",
  [EXPORT_RETRY_EXHAUSTED_CAUSE]: "Copying the work back kept failing",
  [COPYBACK_FAILED_CAUSE]: "Copying the work back failed: files kept for recovery",
  // R-PV-1: two inconclusive reads of the agent pack; the run is held before its first turn.
  [PACK_VERIFICATION_UNAVAILABLE_CAUSE]: "Agent pack could not be verified: run held before its first turn",
};

export function causeInWords(cause: string): string {
  return CAUSE_WORDS[cause] ?? cause.replaceAll("_", " ");
}

const REASON_WORDS: Readonly<Record<UnverifiedReason, string>> = {
  receipt_malformed:
    "The copyback's owner record cannot be read, so nothing can tell whether that copyback stopped.",
  controller_exited_without_barrier:
    "The controller that was copying the work back exited before the copy was confirmed complete; processes it started may still be writing.",
  controller_on_other_host:
    "The controller that was copying the work back ran on another machine, which cannot be checked from here.",
  controller_unobservable:
    "The controller that was copying the work back cannot be observed from here.",
};

export function reasonInWords(reason: string): string {
  return (REASON_WORDS as Readonly<Record<string, string>>)[reason] ?? "The copyback's owner could not be verified.";
}

const PHASE_WORDS: Readonly<Record<FinalizationPhase, string>> = {
  observed: "Waiting for the agent's result",
  result_accepted: "Result accepted, copyback not started",
  workspace_finalizing: "Copying the work back to the workspace",
  arbitrating: "Applying the result to the task",
  committed: "Committed",
  retryable_failure: "Waiting to retry the copyback",
  terminal_failure: "Copyback failed",
};

export function phaseInWords(phase: string): string {
  return (PHASE_WORDS as Readonly<Record<string, string>>)[phase] ?? phase.replaceAll("_", " ");
}

// R-EX-4, R-UI-2: what the copyback-failed hold records as what failed (its evidence's `failure`).
const COPYBACK_FAILURE_WORDS: Readonly<Record<CopybackFailureKind, string>> = {
  merge_conflict: "The host workspace changed the same files (a merge conflict); nothing was written",
  binding_changed: "The task was closed, reassigned or taken over before anything was written",
  copyback_failed: "Copying the files back failed for good",
  result_refused: "The files reached the host, but applying the result to the task was refused",
};

export function copybackFailureInWords(kind: CopybackFailureKind): string {
  return COPYBACK_FAILURE_WORDS[kind];
}

// R-PV-1: why an agent-pack verification read proved nothing (core's pack-verification-policy.ts
// inconclusive reasons), in words; the provider's own error text is not shown.
const PACK_READ_WORDS: Readonly<Record<string, string>> = {
  timeout: "No answer within the 30-second limit",
  signal: "The check was killed before it finished",
  no_exit_status: "The provider did not say how the check ended",
  transport_error: "The connection to the sandbox failed",
  malformed_report: "The check's answer arrived incomplete",
};

export function packReadInWords(reason: string): string {
  return PACK_READ_WORDS[reason] ?? reason.replaceAll("_", " ");
}

// R-RW-3: why the cloud harness's automatic stop proof has not released an unverified-owner hold
// (the harness's refusal codes, the tenant's receipt checks, the takeover's own refusals), in calm
// words. The harness's or the platform's own message is never shown: only the fixed code and these.
const STOP_PROOF_WORDS: Readonly<Record<string, string>> = {
  harness_unavailable: "the stop harness could not be reached",
  unauthorized: "the stop harness did not accept this worker's fleet token",
  invalid_request: "the stop harness could not read the request",
  unknown_stack: "the stop harness does not know this stack",
  deployment_not_owned: "the deployment does not belong to this stack",
  deployment_missing: "the platform does not know the deployment",
  deployment_live: "the deployment is still live",
  evidence_truncated: "the platform's answer arrived incomplete",
  evidence_unavailable: "the platform could not be asked",
  owner_changed: "the run's owner changed meanwhile",
  task_reassigned: "the task changed hands meanwhile",
  receipt_expired: "the stop receipt had expired",
  receipt_not_yet_valid: "the stop receipt is not valid yet (clock skew)",
  receipt_audience: "the stop receipt was meant for something else",
  receipt_signature: "the stop receipt's signature did not verify",
  receipt_kid: "the stop receipt was signed with a key this worker does not trust",
};

export function stopProofInWords(code: string): string {
  if (STOP_PROOF_WORDS[code]) return STOP_PROOF_WORDS[code];
  if (code.startsWith("receipt_")) return "the stop receipt did not match this run";
  return "the automatic stop proof was refused";
}
