// R-EX-3, R-DT-2: admission of an operator's export-only retry, pure. The shell
// (operator/retry-workspace-export.ts) probes the sandbox through the lease's pinned plugin, then
// loads this snapshot inside one transaction that holds the run's finalization advisory lock and
// short row locks, and writes the admitted outcome in that same transaction. A rejection writes
// nothing. The same function judges the second look after the sandbox was resumed and verified
// (`stage: "readmit"`): the retry's own stop-only intent replaces the stopped receipt then.
import type { FinalizationPhase } from "@copyback/db/client";
import { checkRunBinding, type BindingRejectCode, type BindingSnapshot } from "../../finalization/binding";
import type { LeaseFacts, LeasePolicy } from "../../leases/lease-types";
import type { SandboxProbe } from "../../leases/sandbox-probe";
import { EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../records/causes";
import { isOpenRecoveryActionStatus } from "../../records/actions/open-statuses";

/** R-EX-1's failure code: the only terminal coordinator an export-only retry may reopen. */
export const RETRYABLE_EXPORT_FAILURE_CODE = "native_workspace_sync_out_retry_exhausted";

export type ExportRetryState = "resuming" | "readmitted" | "failed";

export interface ExportRetrySnapshot {
  /** "admit": the first look (stopped sandbox, confirmed receipt); "readmit": after resume and verification. */
  stage: "admit" | "readmit";
  request: { runId: string; actionId: string };
  action: {
    cause: string;
    status: string;
    runId: string | null;
    leaseId: string | null;
    /** What the hold recorded when the budget was spent (null: unreadable evidence). */
    evidence: { resultId: string | null; leaseId: string | null; providerLeaseId: string | null; pluginId: string | null } | null;
    /** The retry already recorded on the action, if any. */
    retry: { requestId: string; state: ExportRetryState } | null;
  };
  /** pg_try_advisory_xact_lock on the run's finalization key succeeded in this transaction (R-EX-3: shared ownership). */
  lockAcquired: boolean;
  binding: BindingSnapshot;
  /** The coordinator's failure code (binding holds its phase and result). */
  failureCode: string | null;
  /** The lease the run's prepared workspace descriptor names (null: none). */
  descriptorLeaseId: string | null;
  lease: (LeaseFacts & {
    policy: LeasePolicy;
    /** confirmedStopReceipt of the lease (stage admit). */
    receipt: "confirmed" | "missing" | "invalid" | "mismatch";
    /** R-DT-2: verifyWorkspaceSentinel of the lease's metadata for this run and allocation. */
    sentinel: "valid" | "missing" | "invalid" | "mismatch";
    /** The identity recorded at acquisition names the lease's allocation. */
    identityRecorded: boolean;
    /** The stop-only intent on the lease is the one the action's recorded retry wrote (admit) or this retry wrote (readmit). */
    retryIntentHeld: boolean;
    /** An operator's Discard intent is on the lease (sandboxes/discard-intent.ts; an unreadable one counts): its files were given up. */
    discarding?: boolean;
  }) | null;
  /** Other unsettled leases on the same allocation, and other active leases of the run (R-EX-3: no competing current lease). */
  competingLeaseIds: string[];
  /** Runs of the task created after this one, whatever their status (R-EX-3: no newer execution). */
  newerRunIds: string[];
  plugin: { kind: "found"; stop: boolean; resume: boolean; inspect: boolean; sentinel: boolean } | { kind: "unavailable"; message: string };
  /** What the pinned plugin's inspect said of the exact sandbox (taken before this transaction). */
  sandbox: SandboxProbe;
}

export type ExportRetryRejectCode =
  | "action_not_export_retry"
  | "run_mismatch"
  | "action_not_open"
  | "copyback_lock_active"
  | "not_retry_exhausted"
  | "result_changed"
  | "descriptor_changed"
  | "lease_missing"
  | "lease_changed"
  | "stop_unconfirmed"
  | "sentinel_missing"
  | "sentinel_invalid"
  | "competing_lease"
  | "newer_execution_exists"
  | "provider_plugin_unavailable"
  | "provider_capability_missing"
  | "sandbox_unavailable"
  | "retry_intent_changed"
  | "sandbox_being_discarded"
  | BindingRejectCode;

/** The HTTP status each refusal maps to: 422 for a request that names the wrong thing, 409 for a state that does not admit. */
export const EXPORT_RETRY_REJECT_STATUS: Readonly<Record<ExportRetryRejectCode, 409 | 422>> = {
  action_not_export_retry: 422,
  run_mismatch: 422,
  action_not_open: 409,
  copyback_lock_active: 409,
  not_retry_exhausted: 409,
  result_changed: 409,
  descriptor_changed: 409,
  lease_missing: 409,
  lease_changed: 409,
  stop_unconfirmed: 409,
  sentinel_missing: 409,
  sentinel_invalid: 409,
  competing_lease: 409,
  newer_execution_exists: 409,
  provider_plugin_unavailable: 409,
  provider_capability_missing: 409,
  sandbox_unavailable: 409,
  retry_intent_changed: 409,
  sandbox_being_discarded: 409,
  run_not_found: 409,
  run_not_native: 409,
  run_not_running: 409,
  task_closed: 409,
  task_reassigned: 409,
  newer_execution: 409,
  checkout_changed: 409,
  newer_run: 409,
  result_unbound: 409,
  phase_not_resumable: 409,
};

export type ExportRetryDecision =
  | { kind: "admit"; resultId: string }
  /** R-EX-3: a duplicate request: this action's retry is already in flight or re-admitted; nothing is written. */
  | { kind: "already_requested"; requestId: string; state: "resuming" | "readmitted" }
  | { kind: "reject"; code: ExportRetryRejectCode; status: 409 | 422; message: string };

const READMITTED_PHASES: readonly FinalizationPhase[] = ["result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure", "committed"];

export function decideExportRetry(s: ExportRetrySnapshot): ExportRetryDecision {
  const reject = (code: ExportRetryRejectCode, message: string): ExportRetryDecision => ({ kind: "reject", code, status: EXPORT_RETRY_REJECT_STATUS[code], message });
  const { action, request, lease } = s;
  if (action.cause !== EXPORT_RETRY_EXHAUSTED_CAUSE) return reject("action_not_export_retry", "This recovery action is not an export-only retry hold.");
  if (action.runId !== request.runId) return reject("run_mismatch", "The recovery action belongs to another run.");
  if (!isOpenRecoveryActionStatus(action.status)) return reject("action_not_open", `The recovery action is ${action.status}.`);

  const coordinator = s.binding.coordinator;
  // R-EX-3: idempotent duplicates. A retry in flight, or re-admitted and not exhausted again, is the same answer.
  if (s.stage === "admit" && action.retry) {
    // In flight only while the lease still carries that retry's intent: a retry whose controller
    // died mid-resume is over once the cleanup sweep stopped the sandbox again (a new receipt).
    if (action.retry.state === "resuming" && lease?.retryIntentHeld) return { kind: "already_requested", requestId: action.retry.requestId, state: "resuming" };
    if (action.retry.state === "readmitted" && coordinator && READMITTED_PHASES.includes(coordinator.phase)) {
      return { kind: "already_requested", requestId: action.retry.requestId, state: "readmitted" };
    }
  }
  if (!s.lockAcquired) return reject("copyback_lock_active", "A copyback of this run holds its finalization lock right now.");

  // The run was failed by the exhausted budget: the one binding check sees it as the running run it was.
  const run = s.binding.run;
  if (run && (run.status !== "failed" || !coordinator || coordinator.phase !== "terminal_failure" || s.failureCode !== RETRYABLE_EXPORT_FAILURE_CODE)) {
    return reject("not_retry_exhausted", "The run did not end with the export retry budget spent; there is nothing to retry.");
  }
  const binding = checkRunBinding({ ...s.binding, run: run ? { ...run, status: "running" } : null }, ["terminal_failure"]);
  if (binding.kind === "reject") return reject(binding.code, binding.message);
  if (s.newerRunIds.length > 0) return reject("newer_execution_exists", "A newer run of the task exists; the saved result no longer decides it.");
  if (action.evidence?.resultId !== binding.resultId) return reject("result_changed", "The hold names another accepted result than the run's.");

  if (!lease || action.leaseId === null) return reject("lease_missing", "The hold names no sandbox lease.");
  if (
    lease.id !== action.leaseId ||
    action.evidence?.leaseId !== lease.id ||
    lease.runId !== request.runId ||
    lease.providerLeaseId === null ||
    action.evidence.providerLeaseId !== lease.providerLeaseId ||
    action.evidence.pluginId !== lease.pluginId ||
    !lease.identityRecorded
  ) {
    return reject("lease_changed", "The lease is not the exact allocation the hold recorded.");
  }
  if (s.descriptorLeaseId !== lease.id) return reject("descriptor_changed", "The run's workspace descriptor names another lease.");
  // An operator gave these files up (Discard, maybe interrupted and being finished by the cleanup
  // sweep): never resume a sandbox that is being destroyed, at either look.
  if (lease.discarding) return reject("sandbox_being_discarded", "An operator discarded this sandbox (its destroy may still be finishing); there is nothing to retry from.");
  if (s.competingLeaseIds.length > 0) return reject("competing_lease", "Another current lease competes for this task or allocation.");

  // R-DT-2: an ephemeral allocation must carry the acquisition-time sentinel of this run and
  // allocation; a legacy one without it stays blocked. A reusable allocation is proven by its
  // workspace identity (unchanged; the recorded identity is compared by inspect and resume).
  const ephemeral = lease.policy === "ephemeral";
  if (ephemeral && lease.sentinel === "missing") {
    return reject("sentinel_missing", "The sandbox has no acquisition-time workspace sentinel (a legacy allocation): export-only retry cannot prove it is the original sandbox.");
  }
  if (ephemeral && lease.sentinel !== "valid") return reject("sentinel_invalid", "The lease's workspace sentinel does not belong to this run and allocation.");

  if (s.plugin.kind === "unavailable") return reject("provider_plugin_unavailable", s.plugin.message);
  // R-EX-6: resume admission defers until safe compensation (a verified stop) is available.
  if (!s.plugin.stop || !s.plugin.resume || !s.plugin.inspect || (ephemeral && !s.plugin.sentinel)) {
    return reject("provider_capability_missing", "The lease's plugin cannot stop, resume and inspect its sandbox (and read the sentinel of an ephemeral one).");
  }

  if (s.stage === "admit") {
    // R-EX-5: only a confirmed stop receipt of this exact allocation admits (no pending intent, no stale receipt).
    if (lease.status !== "released" || lease.receipt !== "confirmed") {
      return reject("stop_unconfirmed", "The sandbox has no confirmed stopped receipt; retry after the cleanup has stopped it.");
    }
    if (s.sandbox.kind !== "inspected" || s.sandbox.state !== "stopped" || !s.sandbox.identityMatches) {
      return reject("sandbox_unavailable", s.sandbox.kind === "probe_failed" ? `The sandbox could not be inspected: ${s.sandbox.message}` : "The sandbox is missing, replaced or not stopped.");
    }
  } else {
    // After the resume: the lease still carries exactly this retry's stop-only intent.
    if (lease.status !== "pending_cleanup" || !lease.retryIntentHeld || action.retry?.state !== "resuming") {
      return reject("retry_intent_changed", "The lease's stop-only intent changed while the sandbox was resumed.");
    }
    if (s.sandbox.kind !== "inspected" || s.sandbox.state !== "running" || !s.sandbox.identityMatches) {
      return reject("sandbox_unavailable", "The resumed sandbox is not the recorded one, or not running.");
    }
  }
  return { kind: "admit", resultId: binding.resultId };
}
