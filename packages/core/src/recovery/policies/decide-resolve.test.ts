import { describe, expect, it } from "vitest";
import { STOP_RECEIPT_SCHEMA } from "../../leases/lease-metadata";
import { RETAINED_SOURCE_SCHEMA } from "../../leases/retained-source";
import { STOPPED_EXECUTION_RECEIPT_SCHEMA } from "../../records/stopped-execution-receipt";
import { EXPORT_RETRY_EXHAUSTED_CAUSE, FILE_RECOVERY_CAUSE, LEGACY_COPYBACK_REPAIR_CAUSE, OWNER_UNVERIFIED_CAUSE } from "../../records/causes";
import { decideResolve, type ResolveSnapshot } from "./decide-resolve";

const C = "00000000-0000-4000-8000-00000000000c";
const R = "00000000-0000-4000-8000-00000000000a";
const L = "00000000-0000-4000-8000-000000000003";
const Q = "00000000-0000-4000-8000-000000000004";
const at = "2026-12-01T10:00:00.000Z";
const receipt = { schema: STOP_RECEIPT_SCHEMA, method: "environmentStopLease", requestId: Q, pluginId: "builtin.local", providerLeaseId: "sb-1", stoppedAt: at };
const retained = { schema: RETAINED_SOURCE_SCHEMA, companyId: C, runId: R, leaseId: L, providerLeaseId: "sb-1", pluginId: "builtin.local", originalPolicy: "ephemeral", reason: "legacy_copyback_failed", recordedAt: at };

function legacy(): ResolveSnapshot {
  return {
    request: {
      outcome: "restored",
      sourceIssueStatus: "blocked",
      executionReconciliation: { runId: R, leaseId: L, runStatus: "failed", noExternalActionsPerformed: false },
      workspaceRepairEvidence: { stopEvidence: "provider console shows sb-1 stopped", recoveredFiles: "src/a.ts copied to the host" },
    },
    action: { id: "a1", cause: LEGACY_COPYBACK_REPAIR_CAUSE, status: "active", outcome: null, issueId: "i1", source: { runId: R, leaseId: L, providerLeaseId: "sb-1", pluginId: "builtin.local" } },
    issue: { id: "i1", status: "blocked" },
    run: { id: R, issueId: "i1", status: "failed", runtimeMode: "legacy", runnerProfile: {} },
    lease: { id: L, runId: R, providerLeaseId: "sb-1", pluginId: "builtin.local", status: "released", metadata: { sandboxStopAndRetainReceipt: receipt, retainedSource: retained } },
  };
}

describe("decideResolve", () => {
  it("R-ATT-3: generic resolution can never dismiss an unverified copyback owner hold, whatever the outcome", () => {
    for (const outcome of ["restored", "false_positive", "cancelled"] as const) {
      const s = legacy();
      expect(decideResolve({ ...s, request: { ...s.request, outcome, note: "n" }, action: { ...s.action, cause: OWNER_UNVERIFIED_CAUSE } })).toMatchObject({ kind: "reject", code: "hold_requires_attestation" });
    }
  });
  it("R-RR-5 generic resolution cannot dismiss the export-only-retry hold", () => {
    const s = legacy();
    expect(decideResolve({ ...s, request: { ...s.request, outcome: "false_positive", note: "n" }, action: { ...s.action, cause: EXPORT_RETRY_EXHAUSTED_CAUSE } })).toMatchObject({ kind: "reject", code: "hold_requires_export_retry" });
    expect(decideResolve({ ...s, action: { ...s.action, cause: "something_else" } })).toMatchObject({ code: "action_not_resolvable" });
  });
  it("R-RR-5 admits a verified file-only repair of a legacy hold with the exact lease id", () => {
    expect(decideResolve(legacy())).toEqual({ kind: "admit", status: "resolved", leaseIds: [L], verified: { stopReceiptRequestId: Q, stoppedExecutionRequestId: null, externalActions: "not_certified" } });
  });
  it("R-RR-5 a succeeded legacy run is accepted as it is; a queued or running source is refused", () => {
    const s = legacy();
    expect(decideResolve({ ...s, request: { ...s.request, executionReconciliation: { ...s.request.executionReconciliation, runStatus: "succeeded" } }, run: { ...s.run!, status: "succeeded" } })).toMatchObject({ kind: "admit" });
    for (const status of ["queued", "running"]) {
      expect(decideResolve({ ...s, request: { ...s.request, executionReconciliation: { ...s.request.executionReconciliation, runStatus: status } }, run: { ...s.run!, status } })).toMatchObject({ code: "source_run_active" });
    }
  });
  it("R-RR-5 the source status must be the unchanged current one", () => {
    const s = legacy();
    expect(decideResolve({ ...s, request: { ...s.request, sourceIssueStatus: "in_progress" } })).toMatchObject({ code: "source_status_changed" });
  });
  it("R-RR-5 the reconciliation must name the recorded run, its status and lease", () => {
    const s = legacy();
    const rec = s.request.executionReconciliation;
    expect(decideResolve({ ...s, request: { ...s.request, executionReconciliation: { ...rec, runId: Q } } })).toMatchObject({ code: "run_mismatch" });
    expect(decideResolve({ ...s, request: { ...s.request, executionReconciliation: { ...rec, runStatus: "succeeded" } } })).toMatchObject({ code: "run_status_changed" });
    expect(decideResolve({ ...s, request: { ...s.request, executionReconciliation: { ...rec, leaseId: Q } } })).toMatchObject({ code: "lease_mismatch" });
    expect(decideResolve({ ...s, run: null })).toMatchObject({ code: "run_missing" });
  });
  it("R-RR-5 the retained-source record and the exact stop receipt are required", () => {
    const s = legacy();
    const lease = s.lease!;
    expect(decideResolve({ ...s, lease: { ...lease, metadata: { sandboxStopAndRetainReceipt: receipt } } })).toMatchObject({ code: "retained_source_missing" });
    expect(decideResolve({ ...s, lease: { ...lease, metadata: { sandboxStopAndRetainReceipt: receipt, retainedSource: { ...retained, runId: Q } } } })).toMatchObject({ code: "retained_source_mismatch" });
    expect(decideResolve({ ...s, lease: { ...lease, providerLeaseId: "sb-2" } })).toMatchObject({ code: "retained_source_mismatch" });
    expect(decideResolve({ ...s, lease: { ...lease, runId: Q } })).toMatchObject({ code: "retained_source_mismatch" });
    expect(decideResolve({ ...s, lease: null })).toMatchObject({ code: "retained_source_missing" });
    expect(decideResolve({ ...s, lease: { ...lease, status: "pending_cleanup" } })).toMatchObject({ code: "stop_receipt_missing" });
    expect(decideResolve({ ...s, lease: { ...lease, metadata: { retainedSource: retained } } })).toMatchObject({ code: "stop_receipt_missing" });
    expect(decideResolve({ ...s, request: { ...s.request, workspaceRepairEvidence: undefined } })).toMatchObject({ code: "evidence_required" });
  });
  it("R-FO-5 a file-recovery obligation of a cancelled native run: the stopped-execution receipt is required, no retained-source document, no accepted result; no external action is certified by default", () => {
    const base = legacy();
    const s: ResolveSnapshot = {
      ...base,
      request: { ...base.request, executionReconciliation: { ...base.request.executionReconciliation, runStatus: "cancelled" } },
      action: { ...base.action, cause: FILE_RECOVERY_CAUSE },
      run: { ...base.run!, status: "cancelled", runtimeMode: "native" },
      lease: { ...base.lease!, metadata: { sandboxStopAndRetainReceipt: receipt } },
    };
    expect(decideResolve(s)).toMatchObject({ code: "execution_receipt_missing" });
    const withAck = { ...s, run: { ...s.run!, runnerProfile: { stopAcknowledgement: { schema: STOPPED_EXECUTION_RECEIPT_SCHEMA, requestId: Q, acknowledgedAt: at, leaseId: L } } } };
    expect(decideResolve(withAck)).toMatchObject({ kind: "admit", verified: { stoppedExecutionRequestId: Q, externalActions: "not_certified" } });
    const confirmed = { ...withAck, request: { ...withAck.request, executionReconciliation: { ...withAck.request.executionReconciliation, noExternalActionsPerformed: true } } };
    expect(decideResolve(confirmed)).toMatchObject({ kind: "admit", verified: { externalActions: "not_performed" } });
  });
  it("R-UI-4 the no-external-actions confirmation applies only to a cancelled native run", () => {
    const s = legacy();
    expect(decideResolve({ ...s, request: { ...s.request, executionReconciliation: { ...s.request.executionReconciliation, noExternalActionsPerformed: true } } })).toMatchObject({ code: "external_actions_not_applicable" });
  });
  it("R-RR-5 false_positive and cancelled dispositions need a note and check no receipt; a repeat of a recorded outcome writes nothing", () => {
    const s = legacy();
    const noLease = { ...s, lease: null };
    expect(decideResolve({ ...noLease, request: { ...s.request, outcome: "false_positive" } })).toMatchObject({ code: "note_required" });
    expect(decideResolve({ ...noLease, request: { ...s.request, outcome: "false_positive", note: "not a real failure" } })).toMatchObject({ kind: "admit", status: "resolved" });
    expect(decideResolve({ ...noLease, request: { ...s.request, outcome: "cancelled", note: "discarded" } })).toMatchObject({ kind: "admit", status: "cancelled" });
    expect(decideResolve({ ...s, action: { ...s.action, status: "resolved", outcome: "restored" } })).toEqual({ kind: "already_resolved", leaseIds: [L] });
    expect(decideResolve({ ...s, action: { ...s.action, status: "resolved", outcome: "false_positive" } })).toMatchObject({ code: "action_not_open" });
  });
});
