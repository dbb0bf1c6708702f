// Generic resolution of a recovery action (POST .../recovery-actions/resolve), pure. The shell
// (operator/resolve-recovery-action.ts) loads this snapshot under row locks and writes an admitted
// resolution in the same transaction.
//
// Which holds it resolves: the legacy repair hold (R-RR-2), the file-recovery obligation
// (R-FO-1), the archive-limit hold (R-UA-3) and the copyback-failed hold (R-EX-4), by the table of
// resolvable-holds.ts. It can never dismiss or bypass an unverified copyback owner hold (R-ATT-3: only the
// run's committed copyback resolves it, after an operator's stop attestation) nor an
// export-only-retry hold (R-EX-3: only the export-only retry completes it).
//
// `restored` is a file-only repair (R-RR-5, R-FO-5): the task's status must be the UNCHANGED
// current one, the reconciliation must name the recorded source run and lease, the source run must
// not be queued or running (a `succeeded` legacy run is accepted as it is), the lease must still
// be the retained source the action recorded, stopped with a confirmed provider receipt (and, for
// a cancelled run, the Stop's stopped-execution receipt), and evidence must say that the exact
// allocation stopped and what was recovered. It certifies no external action unless the operator
// confirms, for a cancelled native run only, that none was performed. `false_positive` and
// `cancelled` are deliberate board dispositions with a note; they claim no copyback and check no
// receipt. None of them changes the task, its owner, its conversation or its locks, queues or
// replays anything, or touches the allocation (R-RR-6).
//
// `reverify` (R-PV-1) is the agent-pack verification hold's only way forward: the held run must
// still be queued and held by this very action; the admission renews its read budget and lets the
// claim take it again (the shell writes both), so the SAME run reads its pack again before its
// first turn. Nothing else changes; no agent ever ran for it, so nothing is replayed.
import { confirmedStopReceipt } from "../../leases/lease-metadata";
import { readRetainedSource } from "../../leases/retained-source";
import { readPackVerification } from "../../records/agent-pack-verification";
import { readStoppedExecutionReceipt } from "../../records/stopped-execution-receipt";
import { isOpenRecoveryActionStatus } from "../../records/actions/open-statuses";
import { holdResolvedElsewhere, RESOLVABLE_HOLDS, resolvableHold, type ResolveOutcome } from "../resolvable-holds";

// Which causes are resolved here, and which are sent elsewhere, is resolvable-holds.ts's one table
// (the CLI's help is printed from it too).
export const RESOLVABLE_CAUSES: readonly string[] = RESOLVABLE_HOLDS.map((hold) => hold.cause);
export type { ResolveOutcome };

export interface ResolveRequest {
  outcome: ResolveOutcome;
  sourceIssueStatus: string;
  executionReconciliation: { runId: string; leaseId: string | null; runStatus: string; noExternalActionsPerformed: boolean };
  workspaceRepairEvidence?: { stopEvidence: string; recoveredFiles: string } | undefined;
  note?: string | undefined;
}

/** The source an action recorded (its evidence: run, lease, allocation, plugin), read loosely by the shell. */
export interface RecordedSource {
  runId: string | null;
  leaseId: string | null;
  providerLeaseId: string | null;
  pluginId: string | null;
}

export interface ResolveSnapshot {
  request: ResolveRequest;
  action: { id: string; cause: string; status: string; outcome: string | null; issueId: string; source: RecordedSource };
  issue: { id: string; status: string };
  run: { id: string; issueId: string; status: string; runtimeMode: string; runnerProfile: unknown } | null;
  lease: { id: string; runId: string | null; providerLeaseId: string | null; pluginId: string; status: string; metadata: unknown } | null;
}

export type ResolveRejectCode =
  | "hold_requires_attestation"
  | "hold_requires_export_retry"
  | "action_not_resolvable"
  | "action_not_open"
  | "source_status_changed"
  | "run_mismatch"
  | "run_missing"
  | "source_run_active"
  | "run_status_changed"
  | "lease_mismatch"
  | "retained_source_missing"
  | "retained_source_mismatch"
  | "stop_receipt_missing"
  | "execution_receipt_missing"
  | "external_actions_not_applicable"
  | "evidence_required"
  | "note_required"
  | "outcome_not_applicable"
  | "run_not_held";

export type ResolveDecision =
  | {
      kind: "admit";
      status: "resolved" | "cancelled";
      leaseIds: string[];
      verified: { stopReceiptRequestId: string | null; stoppedExecutionRequestId: string | null; externalActions: "not_performed" | "not_certified" };
      /** R-PV-1: renew the held run's agent-pack read budget and release it to the claim. */
      renewPackBudget?: true;
    }
  /** The same resolution was already recorded: nothing to write. */
  | { kind: "already_resolved"; leaseIds: string[] }
  | { kind: "reject"; code: ResolveRejectCode; message: string };

/** R-ATT-3, R-EX-3: the holds generic resolution never dismisses, whatever the outcome asked for. */
export function refuseProtectedHold(cause: string): Extract<ResolveDecision, { kind: "reject" }> | null {
  const elsewhere = holdResolvedElsewhere(cause);
  return elsewhere ? { kind: "reject", code: elsewhere.code, message: elsewhere.message } : null;
}

const ACTIVE_RUN = new Set(["queued", "running"]);

export function decideResolve(s: ResolveSnapshot): ResolveDecision {
  const reject = (code: ResolveRejectCode, message: string): ResolveDecision => ({ kind: "reject", code, message });
  const { request, action } = s;
  const protectedHold = refuseProtectedHold(action.cause);
  if (protectedHold) return protectedHold;
  const hold = resolvableHold(action.cause);
  if (!hold) return reject("action_not_resolvable", `Recovery actions of cause ${action.cause} are not resolved through this API.`);
  const leaseIds = action.source.leaseId ? [action.source.leaseId] : [];
  if (!isOpenRecoveryActionStatus(action.status)) {
    if (action.outcome === request.outcome) return { kind: "already_resolved", leaseIds };
    return reject("action_not_open", `The recovery action is already ${action.status}${action.outcome ? ` (${action.outcome})` : ""}.`);
  }
  if (!hold.outcomes.includes(request.outcome)) {
    return reject("outcome_not_applicable", `A ${hold.name} is resolved with ${hold.outcomes.join(", ")}, not ${request.outcome}.`);
  }
  // R-RR-5: the task's status must be the unchanged current one; nothing here moves it.
  if (request.sourceIssueStatus !== s.issue.status) {
    return reject("source_status_changed", `The task's status is ${s.issue.status}, not ${request.sourceIssueStatus}; read it again and send the current one.`);
  }
  const reconciliation = request.executionReconciliation;
  if (reconciliation.runId !== action.source.runId) return reject("run_mismatch", "executionReconciliation names another run than the action's source run.");
  const run = s.run;
  if (!run || run.issueId !== action.issueId) return reject("run_missing", "The action's source run no longer exists on this task.");
  if (request.outcome === "reverify") return decideReverify(s, run, leaseIds);
  // R-RR-5: a queued or running source cannot be repaired (or dismissed) this way.
  if (ACTIVE_RUN.has(run.status)) return reject("source_run_active", `The source run is ${run.status}; wait until it has ended.`);
  if (reconciliation.runStatus !== run.status) return reject("run_status_changed", `The source run is ${run.status}, not ${reconciliation.runStatus}.`);
  if (reconciliation.leaseId !== action.source.leaseId) return reject("lease_mismatch", "executionReconciliation names another lease than the action's retained source.");
  const cancelledNative = run.runtimeMode === "native" && run.status === "cancelled";
  // R-UI-4, R-FO-5: only a cancelled native run's operator may confirm that no external action happened.
  if (reconciliation.noExternalActionsPerformed && !cancelledNative) {
    return reject("external_actions_not_applicable", "The no-external-actions confirmation applies only to a cancelled native run.");
  }
  const externalActions = reconciliation.noExternalActionsPerformed ? "not_performed" : "not_certified";

  if (request.outcome !== "restored") {
    // Deliberate board dispositions: a reason is required; they claim no copyback.
    if (!request.note) return reject("note_required", `A ${request.outcome} disposition needs a note that says why.`);
    return { kind: "admit", status: request.outcome === "cancelled" ? "cancelled" : "resolved", leaseIds, verified: { stopReceiptRequestId: null, stoppedExecutionRequestId: null, externalActions } };
  }

  if (!request.workspaceRepairEvidence) return reject("evidence_required", "A restored repair needs workspaceRepairEvidence: how the exact allocation was verified stopped and which files were recovered.");
  // The retained-source record: the lease the action recorded, still that exact allocation and plugin, bound to the run.
  const lease = s.lease;
  if (!lease || !action.source.leaseId || lease.id !== action.source.leaseId) return reject("retained_source_missing", "The action's retained source lease is missing.");
  if (lease.runId !== run.id || lease.providerLeaseId !== action.source.providerLeaseId || lease.pluginId !== action.source.pluginId) {
    return reject("retained_source_mismatch", "The lease no longer holds the allocation the action recorded (another run, allocation or plugin).");
  }
  const retained = readRetainedSource(lease.metadata);
  if (hold.needsRetainedSourceRecord && !retained) return reject("retained_source_missing", "The lease has no retained-source record.");
  if (retained && (retained.runId !== run.id || retained.leaseId !== lease.id || retained.providerLeaseId !== lease.providerLeaseId || retained.pluginId !== lease.pluginId)) {
    return reject("retained_source_mismatch", "The lease's retained-source record names another run or allocation.");
  }
  // R-RR-3, R-RR-5: the exact provider stop receipt (no pending stop: cleanup must have stopped it).
  const receipt = confirmedStopReceipt(lease.metadata, lease);
  if (lease.status !== "released" || receipt.kind !== "confirmed") {
    return reject("stop_receipt_missing", `The retained allocation has no confirmed stop receipt yet (lease ${lease.status}); confirm that cleanup stopped it first.`);
  }
  let stoppedExecutionRequestId: string | null = null;
  if (run.status === "cancelled") {
    const execution = readStoppedExecutionReceipt(run.runnerProfile);
    if (!execution || execution.leaseId !== lease.id) return reject("execution_receipt_missing", "The cancelled run has no stopped-execution receipt for this lease.");
    stoppedExecutionRequestId = execution.requestId;
  }
  return { kind: "admit", status: "resolved", leaseIds, verified: { stopReceiptRequestId: receipt.receipt.requestId, stoppedExecutionRequestId, externalActions } };
}

/** R-PV-1: the held run, still queued under this very hold, gets a fresh read budget. */
function decideReverify(s: ResolveSnapshot, run: NonNullable<ResolveSnapshot["run"]>, leaseIds: string[]): ResolveDecision {
  const { request, action } = s;
  const reconciliation = request.executionReconciliation;
  const held = readPackVerification(run.runnerProfile).held;
  if (run.status !== "queued" || !held || held.actionId !== action.id) {
    return { kind: "reject", code: "run_not_held", message: `The run is ${run.status} and not held by this action's agent-pack verification; there is nothing to verify again.` };
  }
  if (reconciliation.runStatus !== run.status) return { kind: "reject", code: "run_status_changed", message: `The source run is ${run.status}, not ${reconciliation.runStatus}.` };
  if (reconciliation.leaseId !== action.source.leaseId) return { kind: "reject", code: "lease_mismatch", message: "executionReconciliation names a lease; this hold pins none (send null)." };
  if (reconciliation.noExternalActionsPerformed) return { kind: "reject", code: "external_actions_not_applicable", message: "The no-external-actions confirmation applies only to a cancelled native run." };
  if (!request.note) return { kind: "reject", code: "note_required", message: "A reverify needs a note that says what was restored." };
  return { kind: "admit", status: "resolved", leaseIds, verified: { stopReceiptRequestId: null, stoppedExecutionRequestId: null, externalActions: "not_certified" }, renewPackBudget: true };
}
