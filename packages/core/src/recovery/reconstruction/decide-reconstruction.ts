// decideReconstruction (R-RC-1..R-RC-6): the pure admission of "Continue from saved sources", the
// same rule at each of its four moments:
//   record   the operator's request (operator/reconstruct-workspace.ts);
//   deliver  the pending intent becoming a fresh run (reconstruction/deliver-intent.ts);
//   claim    the queued successor being claimed (dispatch/claim-runs.ts);
//   handoff  immediately before the provider gets the run (dispatch/execute-run.ts).
// Each later moment rechecks the sources, the attachments, the authority, the budget, the holds
// and the task's eligibility against the identities the record moment saved (R-RC-5, R-RC-6):
// a changed receipt, a changed attachment or another later run requires a fresh decision.
import { EXPORT_LIMIT_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE } from "../../records/causes";
import { isOpenRecoveryActionStatus } from "../../records/actions/open-statuses";
import type { AttachmentHash, ReconstructionRefusalCode } from "./contract";

/**
 * The holds whose source run has an accepted result whose export failed (NWF "Continue after
 * confirmed source destruction": "when an old export failed"): only these may be reconstructed.
 */
export const RECONSTRUCTABLE_CAUSES = [EXPORT_RETRY_EXHAUSTED_CAUSE, EXPORT_LIMIT_CAUSE] as const;

export type ReconstructionStage = "record" | "deliver" | "claim" | "handoff";

/** The identities and hashes of one later run-only cancellation that may coexist (R-RC-6). */
export interface CoexistingCancellation {
  runId: string;
  stopAcknowledgementRequestId: string;
  /** Each lease of the run with its confirmed stop receipt's request id. */
  leaseReceipts: { leaseId: string; requestId: string }[];
  /** The board file-only repair (the resolved file-recovery action) and the sha256 of its resolution evidence; null when no workspace was ever prepared. */
  repair: { actionId: string; evidenceSha256: string } | null;
}

/** What the record moment decided on, saved with the intent and compared at every later moment. */
export interface SavedDecision {
  resultId: string;
  descriptorLeaseId: string;
  destructionRequestId: string;
  /** Bounded retries after the delivered run (RECONSTRUCTION_RETRY_BUDGET when recorded): saved, so the budget is this decision's, never renewed. */
  retryBudget: number;
  laterCancellations: CoexistingCancellation[];
}

export interface NewerRunFacts {
  id: string;
  status: string;
  errorCode: string | null;
  /** The Stop acknowledgement's request id (run-stop-records.ts), null without one. */
  stopAcknowledgementRequestId: string | null;
  /** Whether the agent's process ever started (the acknowledgement's agent record). */
  agentStarted: boolean;
  retention: { outcome: string; leaseId: string | null; actionId: string | null } | null;
  /** The run's leases: a confirmed stop receipt's request id, or null. */
  leases: { id: string; stopReceiptRequestId: string | null }[];
  /**
   * A run this action's own intent delivered that was refused at its claim or provider handoff
   * (withdrawn) before it had a sandbox or started its agent: it did nothing, so it neither
   * blocks nor joins the fresh decision.
   */
  withdrawnBeforeWork?: boolean;
  /** The file-recovery action of its retained sandbox, as resolved (or not). */
  repair: { actionId: string; status: string; outcome: string | null; externalActions: string | null; evidenceSha256: string } | null;
}

export interface ReconstructionSnapshot {
  stage: ReconstructionStage;
  request: {
    actionId: string;
    sourceRunId: string;
    leaseId: string;
    attachmentIds: readonly string[];
    sourceStatusVersion: number;
    requestId: string;
  };
  /** record: the intent already recorded for this action, or under this request id (any action). */
  existing: { byAction: { id: string; requestId: string; status: string } | null; byRequest: { id: string; actionId: string } | null };
  /** deliver, claim, handoff: the intent being delivered (its saved decision and hashes). */
  intent: { id: string; status: string; deliveredRunId: string | null; saved: SavedDecision | null; attachmentHashes: AttachmentHash[] | null; createdAt: number } | null;
  action: {
    id: string;
    issueId: string;
    cause: string;
    status: string;
    runId: string | null;
    leaseId: string | null;
    /** An export-only retry recorded on it and still resuming. */
    exportRetryInFlight: boolean;
    /** claim/handoff: the action was resolved by this intent's delivery. */
    resolvedByIntentId: string | null;
  } | null;
  /** The source run's finalization advisory lock was free (no copyback owner holds it). */
  lockAcquired: boolean;
  sourceRun: { id: string; issueId: string; agentId: string; status: string; runtimeMode: string; ownerReceipt: boolean } | null;
  coordinator: { phase: string; resultId: string | null } | null;
  acceptedResultId: string | null;
  /** A succeeded workspace_finalize barrier exists for the source run (its files did reach the host). */
  copybackProven: boolean;
  descriptorLeaseId: string | null;
  lease: {
    id: string;
    runId: string | null;
    destruction: "confirmed" | "missing" | "invalid" | "mismatch";
    destructionRequestId: string | null;
    /** A cleanup or recovery claim still in flight on it. */
    claimed: boolean;
  } | null;
  issue: { id: string; status: string; assigneeAgentId: string | null; executionRunId: string | null; checkoutRunId: string | null; statusVersion: number } | null;
  /** Runs that hold the task's execution or checkout and are still queued or running (not the run being claimed). */
  executionOwnerRunIds: string[];
  /** Other open recovery actions of the task (each one competes; givenUpLeaseId says whether its files were given up with a lease). */
  otherOpenActions: { id: string; cause: string; givenUpLeaseId: string | null }[];
  /** Other pending reconstruction intents of the task. */
  otherPendingIntentIds: string[];
  /** Runs of the task newer than the source run, except the claimed run's own chain (chain). */
  newerRuns: NewerRunFacts[];
  /** claim/handoff: the run being dispatched and its predecessor chain back to the delivered run, newest first. */
  chain: { id: string; agentId: string; wakeReason: string | null; status: string; predecessorRunId: string | null; acceptedResult: boolean }[] | null;
  /** deliver/claim/handoff: a person blocked the task or changed its assignee after the intent was recorded (a later human block). */
  humanChangedSince: boolean;
  attachments: { id: string; companyId: string; issueId: string; recordedSha256: string; sizeBytes: number; stored: { sha256: string; sizeBytes: number } | null }[];
  companyId: string;
}

export type ReconstructionDecision =
  | { kind: "adopt"; intentId: string }
  | { kind: "admit"; saved: SavedDecision; attachmentHashes: AttachmentHash[] }
  | { kind: "reject"; code: ReconstructionRefusalCode; message: string };

const reject = (code: ReconstructionRefusalCode, message: string): ReconstructionDecision => ({ kind: "reject", code, message });

const SETTLED_SOURCE_STATUSES = ["failed", "timed_out", "cancelled"];

export function decideReconstruction(s: ReconstructionSnapshot): ReconstructionDecision {
  const { request } = s;
  // R-RC-3: a repeated submission adopts the first intent and writes nothing, whatever changed since.
  if (s.stage === "record") {
    if (s.existing.byRequest && s.existing.byRequest.actionId !== request.actionId) {
      return reject("request_reused", "This request id already recorded a reconstruction for another recovery action.");
    }
    // A cancelled intent (its delivery found the sources changed) is not adopted: a fresh decision replaces it.
    if (s.existing.byAction && s.existing.byAction.status !== "cancelled") return { kind: "adopt", intentId: s.existing.byAction.id };
  } else {
    const intent = s.intent;
    if (!intent || intent.saved === null || intent.attachmentHashes === null) return reject("sources_changed", "The reconstruction intent is missing or unreadable.");
    if (s.stage === "deliver" && intent.status !== "pending") return reject("sources_changed", `The intent is ${intent.status}, not pending.`);
    if (s.stage !== "deliver" && intent.status !== "delivered") return reject("sources_changed", `The intent is ${intent.status}, not delivered.`);
  }

  // The hold the operator acts on: an export-failure hold of this task naming this run and lease.
  const action = s.action;
  if (!action || action.issueId !== s.issue?.id) return reject("action_not_found", "The recovery action was not found on this task.");
  if (!(RECONSTRUCTABLE_CAUSES as readonly string[]).includes(action.cause)) {
    return reject("action_mismatch", `Reconstruction continues after a failed export; this action is ${action.cause}.`);
  }
  if (action.runId !== request.sourceRunId || action.leaseId !== request.leaseId) {
    return reject("action_mismatch", "The recovery action names another run or lease than the request.");
  }
  if (s.stage === "record" || s.stage === "deliver") {
    if (!isOpenRecoveryActionStatus(action.status)) return reject("action_closed", `The recovery action is ${action.status}.`);
  } else if (action.resolvedByIntentId !== s.intent?.id) {
    return reject("sources_changed", "The recovery action was not resolved by this reconstruction's delivery.");
  }

  // R-RC-2: the source run, its accepted result, its failed finalization, its prepared descriptor.
  const run = s.sourceRun;
  if (!run || run.issueId !== action.issueId) return reject("run_not_found", "The source run was not found on this task.");
  if (run.runtimeMode !== "native") return reject("action_mismatch", "Only a native run's lost workspace is reconstructed.");
  // An active copyback owner: the finalization lock is busy, the run still carries an owner receipt, or a claim is in flight on the lease.
  if (!s.lockAcquired || run.ownerReceipt || s.lease?.claimed === true) {
    return reject("active_copyback_owner", "A copyback or recovery still owns the source run or its sandbox.");
  }
  if (!SETTLED_SOURCE_STATUSES.includes(run.status)) return reject("execution_owner", `The source run is ${run.status}.`);
  if (s.copybackProven) return reject("result_unbound", "The source run's copyback finished: its files reached the host and there is nothing to reconstruct.");
  if (!s.coordinator || s.acceptedResultId === null || s.coordinator.resultId !== s.acceptedResultId) {
    return reject("result_unbound", "The source run's finalization is not bound to its accepted result.");
  }
  if (s.coordinator.phase !== "terminal_failure") return reject("result_unbound", `The source run's finalization is ${s.coordinator.phase}, not a failed export.`);

  // R-RC-1: the exact lease the action names, the run's lease, destroyed with a confirmed receipt.
  const lease = s.lease;
  if (!lease) return reject("lease_not_found", "The lease was not found.");
  if (lease.runId !== run.id) return reject("action_mismatch", "The lease belongs to another run.");
  if (lease.destruction !== "confirmed" || lease.destructionRequestId === null) {
    return reject("source_not_destroyed", "The sandbox has no confirmed destruction receipt: a retained or unverified sandbox uses the export-only retry or file recovery instead.");
  }
  if (s.descriptorLeaseId !== lease.id) return reject("descriptor_mismatch", "The source run's prepared workspace descriptor names another lease.");

  // R-RC-2, R-RC-4: the task, its owner and the status version the operator saw.
  const issue = s.issue;
  if (!issue) return reject("action_not_found", "The task was not found.");
  if (issue.status === "done" || issue.status === "cancelled") return reject("task_closed", `The task is ${issue.status}.`);
  if (issue.assigneeAgentId !== run.agentId) return reject("task_reassigned", "The task is assigned to another agent than the source run's.");
  if (s.stage === "record" && issue.statusVersion !== request.sourceStatusVersion) {
    return reject("status_version_changed", `The task's status changed since it was read (version ${issue.statusVersion}, not ${request.sourceStatusVersion}).`);
  }
  if (s.stage !== "record" && s.humanChangedSince) {
    // R-RC-5: a later human block (or reassignment) is never overwritten by automatic checkout.
    return reject("human_block", "A person blocked or reassigned the task after the reconstruction was recorded.");
  }
  // R-RC-4: whatever the displayed status (in_progress after an older run-only Stop too), no run may own the task.
  if (s.executionOwnerRunIds.length > 0) return reject("execution_owner", "Another run owns the task's execution or checkout.");
  if (s.stage === "record" || s.stage === "deliver") {
    if (issue.checkoutRunId !== null) return reject("execution_owner", "A run holds the task's checkout.");
  }

  // Competing recovery: another open hold, another pending intent, an export retry under way.
  if (action.exportRetryInFlight) return reject("competing_recovery", "An export-only retry of the source run is under way.");
  // Every other open hold competes, one given up on this same discarded lease too: the wake that
  // delivers the fresh session refuses while any is open (R-RR-7), so it is closed first.
  const competitor = s.otherOpenActions[0];
  if (competitor) return reject("competing_recovery", `Another recovery action of the task is open (${competitor.cause}${competitor.givenUpLeaseId === lease.id ? ", its files given up with this sandbox: close it with the cancelled disposition first" : ""}).`);
  if (s.otherPendingIntentIds.length > 0) return reject("competing_recovery", "Another reconstruction of the task is pending.");

  // R-RC-5: claim and handoff: the dispatched run's chain back to the approved first run.
  if (s.stage === "claim" || s.stage === "handoff") {
    const chained = checkChain(s);
    if (chained) return chained;
  }

  // Unreconciled newer executions; R-RC-6 later run-only cancellations that may coexist.
  const coexisting: CoexistingCancellation[] = [];
  for (const newer of s.newerRuns) {
    if (newer.withdrawnBeforeWork) continue;
    const verdict = coexistingCancellation(newer);
    if (verdict.kind === "reject") return verdict;
    coexisting.push(verdict.cancellation);
  }

  // Attachments: this task's and company's, with the stored bytes matching their recorded hash.
  const hashes: AttachmentHash[] = [];
  const byId = new Map(s.attachments.map((a) => [a.id, a]));
  const ids = s.stage === "record" ? request.attachmentIds : (s.intent?.attachmentHashes ?? []).map((h) => h.attachmentId);
  if (new Set(ids).size !== ids.length) return reject("foreign_attachment", "An attachment is selected twice.");
  for (const id of ids) {
    const a = byId.get(id);
    if (!a || a.companyId !== s.companyId || a.issueId !== issue.id) return reject("foreign_attachment", "An attachment belongs to another task or company (or does not exist).");
    if (!a.stored) return reject("attachment_unavailable", `The stored bytes of attachment ${id} cannot be read.`);
    if (a.stored.sha256 !== a.recordedSha256 || a.stored.sizeBytes !== a.sizeBytes) return reject("attachment_changed", `The stored bytes of attachment ${id} no longer match its recorded hash.`);
    hashes.push({ attachmentId: id, sha256: a.stored.sha256, sizeBytes: a.stored.sizeBytes });
  }

  const saved: SavedDecision = {
    resultId: s.acceptedResultId,
    descriptorLeaseId: lease.id,
    destructionRequestId: lease.destructionRequestId,
    retryBudget: RECONSTRUCTION_RETRY_BUDGET,
    laterCancellations: coexisting,
  };
  if (s.stage !== "record") {
    // R-RC-5, R-RC-6: the same sources, the same hashes, the same repair decisions, or a fresh decision.
    const before = s.intent?.saved as SavedDecision;
    if (before.resultId !== saved.resultId || before.descriptorLeaseId !== saved.descriptorLeaseId || before.destructionRequestId !== saved.destructionRequestId) {
      return reject("sources_changed", "The source run's result, descriptor or destruction receipt changed since the reconstruction was recorded.");
    }
    if (canonicalCancellations(before.laterCancellations) !== canonicalCancellations(saved.laterCancellations)) {
      return reject("sources_changed", "A later cancellation's stop acknowledgement, receipts or repair changed, or another later run appeared: a fresh decision is needed.");
    }
    if (JSON.stringify(s.intent?.attachmentHashes) !== JSON.stringify(hashes)) return reject("attachment_changed", "The selected attachments changed since the reconstruction was recorded.");
    return { kind: "admit", saved: before, attachmentHashes: hashes };
  }
  return { kind: "admit", saved, attachmentHashes: hashes };
}

/**
 * R-RC-6: a newer run coexists with the older loss decision only as a native run-only
 * cancellation with its exact Stop acknowledgement, confirmed stop receipts on every lease it
 * held, and a board file-only repair whose external-action outcome is `not_performed`. Anything
 * else newer than the source is an unreconciled newer execution.
 */
export function coexistingCancellation(run: NewerRunFacts): { kind: "coexists"; cancellation: CoexistingCancellation } | (ReconstructionDecision & { kind: "reject" }) {
  const refuse = (code: ReconstructionRefusalCode, message: string) => ({ kind: "reject" as const, code, message });
  if (run.status !== "cancelled" || run.errorCode !== "run_stopped" || run.stopAcknowledgementRequestId === null) {
    return refuse("newer_execution", `A newer run of the task (${run.id}, ${run.status}) is not a settled, reconciled run-only cancellation.`);
  }
  const leaseReceipts: { leaseId: string; requestId: string }[] = [];
  for (const lease of run.leases) {
    if (lease.stopReceiptRequestId === null) return refuse("later_cancellation_unrepaired", `The later cancelled run ${run.id} has a lease without a confirmed stop receipt.`);
    leaseReceipts.push({ leaseId: lease.id, requestId: lease.stopReceiptRequestId });
  }
  // Nothing was ever prepared and the agent never started: no files, no actions to certify.
  if (run.leases.length === 0 && !run.agentStarted && (run.retention === null || run.retention.outcome === "nothing_to_retain")) {
    return { kind: "coexists", cancellation: { runId: run.id, stopAcknowledgementRequestId: run.stopAcknowledgementRequestId, leaseReceipts, repair: null } };
  }
  const repair = run.repair;
  if (!repair || repair.status !== "resolved" || repair.outcome !== "restored") {
    return refuse("later_cancellation_unrepaired", `The later cancelled run ${run.id} has no recorded board file-only repair.`);
  }
  if (repair.externalActions !== "not_performed") {
    return refuse("external_action_uncertain", `The later cancelled run ${run.id}'s external actions are not confirmed as not performed; it stays held.`);
  }
  return {
    kind: "coexists",
    cancellation: { runId: run.id, stopAcknowledgementRequestId: run.stopAcknowledgementRequestId, leaseReceipts, repair: { actionId: repair.actionId, evidenceSha256: repair.evidenceSha256 } },
  };
}

/**
 * R-RC-5: the dispatched run is the delivered run, or a bounded retry of it: each link a system
 * `retry` wake of the same agent whose predecessor settled as failed or timed out without a
 * result (an uncertain predecessor outcome stops dispatch), within the saved retry budget.
 */
function checkChain(s: ReconstructionSnapshot): ReconstructionDecision | null {
  const chain = s.chain;
  const intent = s.intent;
  const agentId = s.sourceRun?.agentId;
  if (!chain || chain.length === 0 || !intent?.saved) return reject("sources_changed", "The dispatched run has no predecessor chain to the reconstruction.");
  const first = chain[chain.length - 1] as (typeof chain)[number];
  if (first.id !== intent.deliveredRunId && chain.length > intent.saved.retryBudget + 1) return reject("retry_budget_exhausted", "The reconstruction's bounded retries are used up.");
  if (first.id !== intent.deliveredRunId || first.wakeReason !== RECONSTRUCTION_WAKE_REASON) {
    return reject("sources_changed", "The dispatched run's predecessor chain does not lead back to the approved first run.");
  }
  if (chain.length - 1 > intent.saved.retryBudget) return reject("retry_budget_exhausted", "The reconstruction's bounded retries are used up.");
  for (const [i, link] of chain.entries()) {
    if (link.agentId !== agentId) return reject("task_reassigned", "A run of the chain belongs to another agent.");
    const predecessor = chain[i + 1];
    if (!predecessor) continue;
    if (link.wakeReason !== "retry" || link.predecessorRunId !== predecessor.id) return reject("sources_changed", "A run of the chain is not a bounded retry of its predecessor.");
    if ((predecessor.status !== "failed" && predecessor.status !== "timed_out") || predecessor.acceptedResult) {
      return reject("uncertain_predecessor", `The predecessor run ${predecessor.id} is ${predecessor.status}${predecessor.acceptedResult ? " with a result" : ""}: its outcome is not a plain failure.`);
    }
  }
  return null;
}

/**
 * Refusals at delivery that may pass on a later pass without a new decision (another hold or run
 * still settling, a copyback owner still active): the intent stays pending. Every other refusal
 * means the decision no longer holds (changed sources, hashes or repair decisions, another later
 * run, a human block, a closed task): the intent is cancelled and the operator decides afresh.
 */
export const TRANSIENT_DELIVERY_REFUSALS: readonly string[] = ["competing_recovery", "execution_owner", "active_copyback_owner", "recovery_hold_open", "issue_run_active"];

/**
 * R-RC-5: at a delivered run's claim or handoff, the one refusal that is only a moment's wait: the
 * source run's finalization lock is busy (a sweep or a settling finalization holds it for one
 * transaction) while no owner receipt is on the run and no cleanup claim is on its lease. The
 * decision still holds; withdrawing it would reopen a hold the operator already answered (CI of
 * cf9e10b). An owner receipt or a claimed lease is a real owner and still refuses.
 */
export function onlyFinalizationLockBusy(s: ReconstructionSnapshot): boolean {
  return !s.lockAcquired && s.sourceRun !== null && !s.sourceRun.ownerReceipt && s.lease?.claimed !== true;
}

/**
 * R-RC-5: how many bounded retries (Retry of a failed run of the chain) keep the reconstruction's
 * authority after the delivered run: the same three tries as the export's transient failures.
 * Delivery grants no other budget: the source action's attempts and the source coordinator's
 * attempt stay as they were.
 */
export const RECONSTRUCTION_RETRY_BUDGET = 3;

/** heartbeat_runs.wake_reason of the fresh session a reconstruction delivers. */
export const RECONSTRUCTION_WAKE_REASON = "reconstruction";

function canonicalCancellations(list: readonly CoexistingCancellation[]): string {
  return JSON.stringify(
    [...list]
      .map((c) => ({ ...c, leaseReceipts: [...c.leaseReceipts].sort((a, b) => a.leaseId.localeCompare(b.leaseId)) }))
      .sort((a, b) => a.runId.localeCompare(b.runId)),
  );
}
