import { describe, expect, it } from "vitest";
import { coexistingCancellation, decideReconstruction, onlyFinalizationLockBusy, RECONSTRUCTION_RETRY_BUDGET, RECONSTRUCTION_WAKE_REASON, type NewerRunFacts, type ReconstructionSnapshot, type SavedDecision } from "./decide-reconstruction";

const SHA = "a".repeat(64);
const ids = {
  company: "c0000000-0000-4000-8000-000000000001",
  issue: "i0000000-0000-4000-8000-000000000001",
  action: "a0000000-0000-4000-8000-000000000001",
  run: "r0000000-0000-4000-8000-000000000001",
  lease: "l0000000-0000-4000-8000-000000000001",
  agent: "g0000000-0000-4000-8000-000000000001",
  result: "s0000000-0000-4000-8000-000000000001",
  attachment: "f0000000-0000-4000-8000-000000000001",
  intent: "n0000000-0000-4000-8000-000000000001",
  delivered: "d0000000-0000-4000-8000-000000000001",
};

function base(overrides: Partial<ReconstructionSnapshot> = {}): ReconstructionSnapshot {
  return {
    stage: "record",
    companyId: ids.company,
    request: { actionId: ids.action, sourceRunId: ids.run, leaseId: ids.lease, attachmentIds: [ids.attachment], sourceStatusVersion: 2, requestId: "req-1" },
    existing: { byAction: null, byRequest: null },
    intent: null,
    action: { id: ids.action, issueId: ids.issue, cause: "native_workspace_sync_out_retry_exhausted", status: "active", runId: ids.run, leaseId: ids.lease, exportRetryInFlight: false, resolvedByIntentId: null },
    lockAcquired: true,
    sourceRun: { id: ids.run, issueId: ids.issue, agentId: ids.agent, status: "failed", runtimeMode: "native", ownerReceipt: false },
    coordinator: { phase: "terminal_failure", resultId: ids.result },
    acceptedResultId: ids.result,
    copybackProven: false,
    descriptorLeaseId: ids.lease,
    lease: { id: ids.lease, runId: ids.run, destruction: "confirmed", destructionRequestId: "destroy-1", claimed: false },
    issue: { id: ids.issue, status: "blocked", assigneeAgentId: ids.agent, executionRunId: ids.run, checkoutRunId: null, statusVersion: 2 },
    executionOwnerRunIds: [],
    otherOpenActions: [],
    otherPendingIntentIds: [],
    newerRuns: [],
    chain: null,
    humanChangedSince: false,
    attachments: [{ id: ids.attachment, companyId: ids.company, issueId: ids.issue, recordedSha256: SHA, sizeBytes: 5, stored: { sha256: SHA, sizeBytes: 5 } }],
    ...overrides,
  };
}

const saved: SavedDecision = { resultId: ids.result, descriptorLeaseId: ids.lease, destructionRequestId: "destroy-1", retryBudget: RECONSTRUCTION_RETRY_BUDGET, laterCancellations: [] };
const hashes = [{ attachmentId: ids.attachment, sha256: SHA, sizeBytes: 5 }];

/** A later stage: the intent recorded with `saved`, delivered (claim, handoff) to `ids.delivered`. */
function later(stage: "deliver" | "claim" | "handoff", overrides: Partial<ReconstructionSnapshot> = {}): ReconstructionSnapshot {
  const delivered = stage !== "deliver";
  return base({
    stage,
    intent: { id: ids.intent, status: delivered ? "delivered" : "pending", deliveredRunId: delivered ? ids.delivered : null, saved, attachmentHashes: hashes, createdAt: 0 },
    ...(delivered
      ? {
          action: { ...base().action!, status: "resolved", resolvedByIntentId: ids.intent },
          chain: [{ id: ids.delivered, agentId: ids.agent, wakeReason: RECONSTRUCTION_WAKE_REASON, status: "queued", predecessorRunId: null, acceptedResult: false }],
        }
      : {}),
    ...overrides,
  });
}

const cancelled = (overrides: Partial<NewerRunFacts> = {}): NewerRunFacts => ({
  id: "x0000000-0000-4000-8000-000000000001",
  status: "cancelled",
  errorCode: "run_stopped",
  stopAcknowledgementRequestId: "ack-1",
  agentStarted: true,
  retention: { outcome: "pinned", leaseId: "y0000000-0000-4000-8000-000000000001", actionId: "z0000000-0000-4000-8000-000000000001" },
  leases: [{ id: "y0000000-0000-4000-8000-000000000001", stopReceiptRequestId: "stop-1" }],
  repair: { actionId: "z0000000-0000-4000-8000-000000000001", status: "resolved", outcome: "restored", externalActions: "not_performed", evidenceSha256: "e".repeat(64) },
  ...overrides,
});

const codeOf = (s: ReconstructionSnapshot) => {
  const d = decideReconstruction(s);
  return d.kind === "reject" ? d.code : d.kind;
};

describe("decideReconstruction: record", () => {
  it("R-RC-1 admits an export-failure hold whose exact lease has a confirmed destruction receipt, saving the identities and hashes", () => {
    const d = decideReconstruction(base());
    expect(d).toEqual({ kind: "admit", saved, attachmentHashes: hashes });
  });

  it.each([
    ["missing", "source_not_destroyed"],
    ["invalid", "source_not_destroyed"],
    ["mismatch", "source_not_destroyed"],
  ] as const)("R-RC-1 a retained or unverified sandbox (receipt %s) is refused %s", (destruction, code) => {
    expect(codeOf(base({ lease: { ...base().lease!, destruction, destructionRequestId: null } }))).toBe(code);
  });

  it("R-RC-1 the lease must be the run's own and the one the action names", () => {
    expect(codeOf(base({ lease: { ...base().lease!, runId: "other" } }))).toBe("action_mismatch");
    expect(codeOf(base({ request: { ...base().request, leaseId: "other" } }))).toBe("action_mismatch");
    expect(codeOf(base({ lease: null }))).toBe("lease_not_found");
  });

  it.each<[string, Partial<ReconstructionSnapshot>, string]>([
    ["the action is missing", { action: null }, "action_not_found"],
    ["the action is of another cause", { action: { ...base().action!, cause: "native_workspace_file_recovery_required" } }, "action_mismatch"],
    ["the action is resolved", { action: { ...base().action!, status: "resolved" } }, "action_closed"],
    ["the source run is missing", { sourceRun: null }, "run_not_found"],
    ["the source run is another action's", { request: { ...base().request, sourceRunId: "other" } }, "action_mismatch"],
    ["the source run is still running", { sourceRun: { ...base().sourceRun!, status: "running" } }, "execution_owner"],
    ["the result is not accepted", { acceptedResultId: null }, "result_unbound"],
    ["the coordinator names another result", { coordinator: { phase: "terminal_failure", resultId: "other" } }, "result_unbound"],
    ["the finalization did not fail", { coordinator: { phase: "committed", resultId: ids.result } }, "result_unbound"],
    ["the copyback finished", { copybackProven: true }, "result_unbound"],
    ["the descriptor names another lease", { descriptorLeaseId: "other" }, "descriptor_mismatch"],
    ["there is no descriptor", { descriptorLeaseId: null }, "descriptor_mismatch"],
    ["the task is done", { issue: { ...base().issue!, status: "done" } }, "task_closed"],
    ["the task is assigned to another agent", { issue: { ...base().issue!, assigneeAgentId: "other" } }, "task_reassigned"],
    ["the status version changed", { issue: { ...base().issue!, statusVersion: 3 } }, "status_version_changed"],
  ])("R-RC-2 validates the source: %s -> %s", (_what, overrides, code) => {
    expect(codeOf(base(overrides))).toBe(code);
  });

  it("R-RC-2 rejects active copyback owners: the finalization lock busy, an owner receipt, a claim in flight on the lease", () => {
    expect(codeOf(base({ lockAcquired: false }))).toBe("active_copyback_owner");
    expect(codeOf(base({ sourceRun: { ...base().sourceRun!, ownerReceipt: true } }))).toBe("active_copyback_owner");
    expect(codeOf(base({ lease: { ...base().lease!, claimed: true } }))).toBe("active_copyback_owner");
  });

  it("R-RC-5 only a busy finalization lock is a moment's wait at claim and handoff; an owner receipt or a claimed lease is a real owner", () => {
    expect(onlyFinalizationLockBusy(base({ lockAcquired: false }))).toBe(true);
    expect(onlyFinalizationLockBusy(base())).toBe(false);
    expect(onlyFinalizationLockBusy(base({ lockAcquired: false, sourceRun: { ...base().sourceRun!, ownerReceipt: true } }))).toBe(false);
    expect(onlyFinalizationLockBusy(base({ lockAcquired: false, lease: { ...base().lease!, claimed: true } }))).toBe(false);
    expect(onlyFinalizationLockBusy(base({ lockAcquired: false, sourceRun: null }))).toBe(false);
  });

  it("R-RC-2 rejects competing recovery: another open action, another pending intent, an export retry under way", () => {
    expect(codeOf(base({ otherOpenActions: [{ id: "o", cause: "native_workspace_file_recovery_required", givenUpLeaseId: null }] }))).toBe("competing_recovery");
    expect(codeOf(base({ otherPendingIntentIds: ["p"] }))).toBe("competing_recovery");
    expect(codeOf(base({ action: { ...base().action!, exportRetryInFlight: true } }))).toBe("competing_recovery");
    // One whose files were given up with this same sandbox competes too: the delivering wake would refuse it.
    expect(codeOf(base({ otherOpenActions: [{ id: "o", cause: "native_workspace_file_recovery_required", givenUpLeaseId: ids.lease }] }))).toBe("competing_recovery");
  });

  it("R-RC-2 rejects unreconciled newer executions of the task", () => {
    for (const status of ["queued", "running", "succeeded", "failed", "timed_out"]) {
      expect(codeOf(base({ newerRuns: [cancelled({ status, errorCode: null })] }))).toBe("newer_execution");
    }
    // A cancellation that was not a run-only Stop (no acknowledgement) is not reconciled either.
    expect(codeOf(base({ newerRuns: [cancelled({ stopAcknowledgementRequestId: null })] }))).toBe("newer_execution");
  });

  it("R-RC-5 a run of this action's own withdrawn intent that never had a sandbox nor started its agent does not block a fresh decision", () => {
    expect(codeOf(base({ newerRuns: [cancelled({ status: "failed", errorCode: "attachment_changed", stopAcknowledgementRequestId: null, withdrawnBeforeWork: true })] }))).toBe("admit");
    expect(codeOf(base({ newerRuns: [cancelled({ status: "failed", errorCode: "attachment_changed", stopAcknowledgementRequestId: null, withdrawnBeforeWork: false })] }))).toBe("newer_execution");
  });

  it("R-RC-2 rejects attachments of another task or company, unreadable or changed bytes, and a duplicate", () => {
    const a = base().attachments[0]!;
    expect(codeOf(base({ attachments: [{ ...a, issueId: "other" }] }))).toBe("foreign_attachment");
    expect(codeOf(base({ attachments: [{ ...a, companyId: "other" }] }))).toBe("foreign_attachment");
    expect(codeOf(base({ attachments: [] }))).toBe("foreign_attachment");
    expect(codeOf(base({ attachments: [{ ...a, stored: null }] }))).toBe("attachment_unavailable");
    expect(codeOf(base({ attachments: [{ ...a, stored: { sha256: "b".repeat(64), sizeBytes: 5 } }] }))).toBe("attachment_changed");
    expect(codeOf(base({ request: { ...base().request, attachmentIds: [ids.attachment, ids.attachment] } }))).toBe("foreign_attachment");
  });

  it("R-RC-3 a repeated submission (same action, or same request id) adopts the first intent whatever changed since", () => {
    expect(decideReconstruction(base({ existing: { byAction: { id: ids.intent, requestId: "req-1", status: "pending" }, byRequest: { id: ids.intent, actionId: ids.action } }, lockAcquired: false }))).toEqual({ kind: "adopt", intentId: ids.intent });
    expect(decideReconstruction(base({ existing: { byAction: { id: ids.intent, requestId: "req-0", status: "delivered" }, byRequest: null }, issue: { ...base().issue!, statusVersion: 9 } }))).toEqual({ kind: "adopt", intentId: ids.intent });
    expect(codeOf(base({ existing: { byAction: null, byRequest: { id: ids.intent, actionId: "another-action" } } }))).toBe("request_reused");
    // A cancelled intent is not adopted: the fresh decision is admitted (and replaces it).
    expect(codeOf(base({ existing: { byAction: { id: ids.intent, requestId: "req-0", status: "cancelled" }, byRequest: null } }))).toBe("admit");
  });

  it("R-RC-4 an in_progress task after an older run-only Stop is accepted only with no execution or checkout owner", () => {
    const inProgress = { ...base().issue!, status: "in_progress", executionRunId: "stopped-run", checkoutRunId: null };
    expect(codeOf(base({ issue: inProgress }))).toBe("admit");
    expect(codeOf(base({ issue: inProgress, executionOwnerRunIds: ["stopped-run"] }))).toBe("execution_owner");
    expect(codeOf(base({ issue: { ...inProgress, checkoutRunId: "stopped-run" } }))).toBe("execution_owner");
    // ... and the same source, recovery and status-version checks.
    expect(codeOf(base({ issue: { ...inProgress, statusVersion: 7 } }))).toBe("status_version_changed");
    expect(codeOf(base({ issue: inProgress, otherPendingIntentIds: ["p"] }))).toBe("competing_recovery");
  });

  it("R-RC-6 a later run-only cancellation coexists after its Stop acknowledgement, stopped lease receipts and file-only repair with not_performed; its identities are saved", () => {
    const d = decideReconstruction(base({ newerRuns: [cancelled()] }));
    expect(d).toMatchObject({
      kind: "admit",
      saved: { laterCancellations: [{ runId: cancelled().id, stopAcknowledgementRequestId: "ack-1", leaseReceipts: [{ leaseId: cancelled().leases[0]!.id, requestId: "stop-1" }], repair: { actionId: cancelled().repair!.actionId, evidenceSha256: "e".repeat(64) } }] },
    });
  });

  it.each<[string, Partial<NewerRunFacts>, string]>([
    ["a lease without a stop receipt", { leases: [{ id: "y", stopReceiptRequestId: null }] }, "later_cancellation_unrepaired"],
    ["no file-only repair", { repair: null }, "later_cancellation_unrepaired"],
    ["a repair still open", { repair: { ...cancelled().repair!, status: "active", outcome: null } }, "later_cancellation_unrepaired"],
    ["a cancelled (not restored) disposition", { repair: { ...cancelled().repair!, status: "cancelled", outcome: "cancelled" } }, "later_cancellation_unrepaired"],
    ["external actions not certified (unknown)", { repair: { ...cancelled().repair!, externalActions: "not_certified" } }, "external_action_uncertain"],
    ["external actions performed", { repair: { ...cancelled().repair!, externalActions: "performed" } }, "external_action_uncertain"],
  ])("R-RC-6 a later cancellation with %s stays held (%s)", (_what, overrides, code) => {
    expect(codeOf(base({ newerRuns: [cancelled(overrides)] }))).toBe(code);
  });

  it("R-RC-6 a cancellation before any lease or agent start needs no repair", () => {
    const early = cancelled({ agentStarted: false, leases: [], retention: { outcome: "nothing_to_retain", leaseId: null, actionId: null }, repair: null });
    expect(coexistingCancellation(early)).toMatchObject({ kind: "coexists", cancellation: { repair: null, leaseReceipts: [] } });
  });
});

describe("decideReconstruction: delivery, claim and handoff (R-RC-5)", () => {
  it("R-RC-5 delivery admits the pending intent with its saved decision while nothing changed", () => {
    expect(decideReconstruction(later("deliver"))).toEqual({ kind: "admit", saved, attachmentHashes: hashes });
  });

  it("R-RC-5 delivery rechecks sources, attachments, holds and eligibility", () => {
    const a = base().attachments[0]!;
    expect(codeOf(later("deliver", { attachments: [{ ...a, stored: { sha256: "b".repeat(64), sizeBytes: 5 } }] }))).toBe("attachment_changed");
    expect(codeOf(later("deliver", { lease: { ...base().lease!, destructionRequestId: "destroy-2" } }))).toBe("sources_changed");
    expect(codeOf(later("deliver", { otherOpenActions: [{ id: "o", cause: "x", givenUpLeaseId: null }] }))).toBe("competing_recovery");
    // A status change alone (a person moved the task to todo) is no block; a person's block is.
    expect(codeOf(later("deliver", { issue: { ...base().issue!, status: "todo", statusVersion: 3 } }))).toBe("admit");
    expect(codeOf(later("deliver", { humanChangedSince: true }))).toBe("human_block");
    expect(codeOf(later("deliver", { issue: { ...base().issue!, status: "cancelled" } }))).toBe("task_closed");
    expect(codeOf(later("deliver", { issue: { ...base().issue!, assigneeAgentId: "other" } }))).toBe("task_reassigned");
    expect(codeOf(later("deliver", { intent: { ...later("deliver").intent!, status: "delivered" } }))).toBe("sources_changed");
    expect(codeOf(later("deliver", { intent: { ...later("deliver").intent!, saved: null } }))).toBe("sources_changed");
  });

  it.each(["claim", "handoff"] as const)("R-RC-5 %s admits the delivered run and refuses a later human block", (stage) => {
    expect(codeOf(later(stage, { issue: { ...base().issue!, statusVersion: 5 } }))).toBe("admit");
    expect(codeOf(later(stage, { humanChangedSince: true }))).toBe("human_block");
  });

  it("R-RC-5 claim rechecks the exact intent: the action resolved by it, the chain back to the delivered run", () => {
    expect(codeOf(later("claim", { action: { ...base().action!, status: "resolved", resolvedByIntentId: "another" } }))).toBe("sources_changed");
    expect(codeOf(later("claim", { chain: [{ id: "someone-else", agentId: ids.agent, wakeReason: "manual_wake", status: "queued", predecessorRunId: null, acceptedResult: false }] }))).toBe("sources_changed");
    expect(codeOf(later("claim", { newerRuns: [cancelled({ status: "succeeded", errorCode: null })] }))).toBe("newer_execution");
  });

  it("R-RC-5 bounded retries keep the same authority: a retry chain of failed runs back to the delivered run, within the saved budget", () => {
    const link = (id: string, predecessor: string | null, status: string, wakeReason = "retry") => ({ id, agentId: ids.agent, wakeReason, status, predecessorRunId: predecessor, acceptedResult: false });
    const delivered = link(ids.delivered, null, "failed", RECONSTRUCTION_WAKE_REASON);
    expect(codeOf(later("claim", { chain: [link("r1", ids.delivered, "queued"), delivered] }))).toBe("admit");
    // Uncertain predecessor outcomes stop dispatch: cancelled, still running, or with a result.
    expect(codeOf(later("claim", { chain: [link("r1", ids.delivered, "queued"), { ...delivered, status: "cancelled" }] }))).toBe("uncertain_predecessor");
    expect(codeOf(later("claim", { chain: [link("r1", ids.delivered, "queued"), { ...delivered, acceptedResult: true }] }))).toBe("uncertain_predecessor");
    // A link that is not a system retry wake of its predecessor.
    expect(codeOf(later("claim", { chain: [link("r1", ids.delivered, "queued", "manual_wake"), delivered] }))).toBe("sources_changed");
    // The budget: RECONSTRUCTION_RETRY_BUDGET retries, not one more.
    const chain = [delivered];
    for (let i = 1; i <= RECONSTRUCTION_RETRY_BUDGET + 1; i += 1) chain.unshift(link(`r${i}`, chain[0]!.id, i === RECONSTRUCTION_RETRY_BUDGET + 1 ? "queued" : "failed"));
    expect(codeOf(later("claim", { chain }))).toBe("retry_budget_exhausted");
    expect(codeOf(later("claim", { chain: chain.slice(1) }))).toBe("admit");
  });

  it("R-RC-6 claim rechecks the saved repair decisions: a changed receipt or another later run requires a fresh decision", () => {
    const withCancellation = { ...saved, laterCancellations: (decideReconstruction(base({ newerRuns: [cancelled()] })) as { saved: SavedDecision }).saved.laterCancellations };
    const intent = { ...later("claim").intent!, saved: withCancellation };
    expect(codeOf(later("claim", { intent, newerRuns: [cancelled()] }))).toBe("admit");
    expect(codeOf(later("claim", { intent, newerRuns: [cancelled({ leases: [{ id: cancelled().leases[0]!.id, stopReceiptRequestId: "stop-2" }] })] }))).toBe("sources_changed");
    expect(codeOf(later("claim", { intent, newerRuns: [cancelled(), cancelled({ id: "x2" })] }))).toBe("sources_changed");
    expect(codeOf(later("claim", { intent, newerRuns: [] }))).toBe("sources_changed");
  });
});
