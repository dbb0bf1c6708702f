import { describe, expect, it } from "vitest";
import { AGENT_PACK_VERIFICATION_KEY, AGENT_PACK_VERIFICATION_SCHEMA } from "../../records/agent-pack-verification";
import { FILE_RECOVERY_CAUSE, PACK_VERIFICATION_UNAVAILABLE_CAUSE } from "../../records/causes";
import { deriveTaskNotice } from "../task-notice";
import { holdReason } from "../../runs/recovery-hold";
import { RESOLVABLE_HOLDS } from "../resolvable-holds";
import { decideResolve, type ResolveSnapshot } from "./decide-resolve";

const R = "00000000-0000-4000-8000-00000000000a";
const A = "00000000-0000-4000-8000-0000000000a1";
const heldBy = (actionId: string | null) => ({
  [AGENT_PACK_VERIFICATION_KEY]: { schema: AGENT_PACK_VERIFICATION_SCHEMA, inconclusive: 2, reads: [], renewals: [], held: actionId ? { actionId, at: "2026-12-07T03:00:00.000Z" } : null },
});

function held(): ResolveSnapshot {
  return {
    request: { outcome: "reverify", sourceIssueStatus: "in_progress", executionReconciliation: { runId: R, leaseId: null, runStatus: "queued", noExternalActionsPerformed: false }, note: "The provider's API answers again." },
    action: { id: A, cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE, status: "active", outcome: null, issueId: "i1", source: { runId: R, leaseId: null, providerLeaseId: null, pluginId: "builtin.local" } },
    issue: { id: "i1", status: "in_progress" },
    run: { id: R, issueId: "i1", status: "queued", runtimeMode: "native", runnerProfile: heldBy(A) },
    lease: null,
  };
}

describe("decideResolve: the agent-pack verification hold", () => {
  it("R-PV-1 reverify of the run queued under this very hold is admitted and renews its budget", () => {
    expect(decideResolve(held())).toEqual({
      kind: "admit",
      status: "resolved",
      leaseIds: [],
      verified: { stopReceiptRequestId: null, stoppedExecutionRequestId: null, externalActions: "not_certified" },
      renewPackBudget: true,
    });
  });

  it("R-PV-1 reverify is refused for a run no longer held by this action, a changed status, a lease, or without a note", () => {
    const s = held();
    expect(decideResolve({ ...s, run: { ...s.run!, runnerProfile: heldBy("another") } })).toMatchObject({ kind: "reject", code: "run_not_held" });
    expect(decideResolve({ ...s, run: { ...s.run!, runnerProfile: heldBy(null) } })).toMatchObject({ code: "run_not_held" });
    expect(decideResolve({ ...s, run: { ...s.run!, status: "cancelled" } })).toMatchObject({ code: "run_not_held" });
    expect(decideResolve({ ...s, request: { ...s.request, executionReconciliation: { ...s.request.executionReconciliation, runStatus: "running" } } })).toMatchObject({ code: "run_status_changed" });
    expect(decideResolve({ ...s, request: { ...s.request, executionReconciliation: { ...s.request.executionReconciliation, leaseId: R } } })).toMatchObject({ code: "lease_mismatch" });
    expect(decideResolve({ ...s, request: { ...s.request, note: undefined } })).toMatchObject({ code: "note_required" });
    expect(decideResolve({ ...s, request: { ...s.request, sourceIssueStatus: "blocked" } })).toMatchObject({ code: "source_status_changed" });
  });

  it("R-PV-1 the hold accepts reverify and the deliberate dispositions only; a file hold refuses reverify", () => {
    const s = held();
    expect(decideResolve({ ...s, request: { ...s.request, outcome: "restored", workspaceRepairEvidence: { stopEvidence: "x", recoveredFiles: "y" } } })).toMatchObject({ code: "outcome_not_applicable" });
    expect(decideResolve({ ...s, action: { ...s.action, cause: FILE_RECOVERY_CAUSE } })).toMatchObject({ code: "outcome_not_applicable" });
    // A disposition needs the run ended first (Stop it): a queued run is still active.
    expect(decideResolve({ ...s, request: { ...s.request, outcome: "cancelled" } })).toMatchObject({ code: "source_run_active" });
    const stopped = { ...s, request: { ...s.request, outcome: "cancelled" as const, executionReconciliation: { ...s.request.executionReconciliation, runStatus: "cancelled" } }, run: { ...s.run!, status: "cancelled" } };
    expect(decideResolve(stopped)).toMatchObject({ kind: "admit", status: "cancelled" });
    expect(RESOLVABLE_HOLDS.find((hold) => hold.cause === PACK_VERIFICATION_UNAVAILABLE_CAUSE)?.outcomes).toEqual(["reverify", "false_positive", "cancelled"]);
  });

  it("R-PV-1 the task's notice is quiet (no ids, no codes) and names the run to inspect; the hold's reason refuses new work in words", () => {
    const notice = deriveTaskNotice([{ id: A, cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE, status: "active", runId: R, recoveryQueued: false, createdAt: new Date() }]);
    expect(notice).toMatchObject({ kind: "attention", runId: R, cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE });
    const message = notice.kind === "attention" ? notice.message : "";
    expect(message).toContain("Nothing was lost");
    expect(message).not.toMatch(/runner_|[0-9a-f]{8}-|pack/);
    expect(holdReason(PACK_VERIFICATION_UNAVAILABLE_CAUSE)).toContain("agent pack could not be verified");
  });
});
