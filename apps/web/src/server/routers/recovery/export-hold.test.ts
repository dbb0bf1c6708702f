// exportHoldDetails, pure: what Recovery details show of an export hold.
import { describe, expect, it } from "vitest";
import {
  COPYBACK_FAILED_CAUSE,
  EXPORT_LIMIT_CAUSE,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
  OWNER_UNVERIFIED_CAUSE,
  COPYBACK_FAILED_EVIDENCE_SCHEMA,
  EXPORT_LIMIT_EVIDENCE_SCHEMA,
  EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA,
} from "@copyback/core/records";
import { resolveRecoveryActionBody, retryWorkspaceExportBody } from "@copyback/core/recovery";
import { exportHoldDetails, type ExportHoldFacts } from "./export-hold";

const ISSUE = "c0ffee00-aaaa-4bbb-8ccc-dddddddddddd";
const ACTION = "0badf00d-1234-4567-89ab-cdef01234567";
const RUN = "2f6e9a10-1111-4222-8333-944455556666";
const LEASE = "3a7e9a10-1111-4222-8333-944455556666";
const COMPANY = "7d1c8f2e-3b4a-4c5d-8e6f-0a1b2c3d4e5f";
const REQUEST = "4b8e9a10-1111-4222-8333-944455556666";

const receipt = { schema: "copyback.sandbox-stop-and-retain-receipt.v1", method: "environmentStopLease", requestId: REQUEST, pluginId: "builtin.local", providerLeaseId: "sbx-1", stoppedAt: "2026-12-01T12:00:00.000Z" };

function facts(metadata: unknown, status = "released"): ExportHoldFacts {
  return {
    run: { id: RUN, status: "failed", errorCode: "native_workspace_sync_out_retry_exhausted", finalization: { phase: "terminal_failure", attempt: 3 } },
    lease: { id: LEASE, companyId: COMPANY, runId: RUN, status, leasePolicy: "reuse_by_environment", provider: "local", pluginId: "builtin.local", providerLeaseId: "sbx-1", metadata },
    operations: [{ phase: "workspace_finalize", status: "failed", errorCode: "provider_export_failed", startedAt: new Date(), finishedAt: new Date(), metadata: { attempt: 3, exhausted: true } }],
  };
}

const exhaustedRow = {
  id: ACTION,
  issueId: ISSUE,
  cause: EXPORT_RETRY_EXHAUSTED_CAUSE,
  runId: RUN,
  leaseId: LEASE,
  evidence: { schema: EXPORT_RETRY_EXHAUSTED_EVIDENCE_SCHEMA, runId: RUN, resultId: null, leaseId: LEASE, providerLeaseId: "sbx-1", pluginId: "builtin.local", attempts: 3, lastFailureCode: "provider_export_failed", detectedAt: "2026-12-01T12:00:00.000Z" },
};

describe("exportHoldDetails", () => {
  it("R-EX-2 an exhausted hold shows the run, lease, allocation, confirmed receipt, attempts and the exact export-only retry call (REST and CLI)", () => {
    const hold = exportHoldDetails(exhaustedRow, facts({ sandboxStopAndRetainReceipt: receipt }), "https://c.example");
    expect(hold).toMatchObject({
      kind: "retry_exhausted",
      run: { id: RUN, status: "failed", errorCode: "native_workspace_sync_out_retry_exhausted", phase: "terminal_failure", attempt: 3 },
      lease: { id: LEASE, providerLeaseId: "sbx-1", pluginId: "builtin.local", stopPending: false },
      stoppedReceipt: { method: "environmentStopLease", requestId: REQUEST, providerLeaseId: "sbx-1" },
      limit: null,
      attempts: [{ attempt: 3, failureCode: "provider_export_failed", exhausted: true }],
    });
    expect(hold?.retryCall?.url).toBe(`https://c.example/api/issues/${ISSUE}/recovery-actions/retry-workspace-export`);
    expect(hold?.retryCall?.body).toMatchObject({ actionId: ACTION, runId: RUN });
    expect(retryWorkspaceExportBody.safeParse(hold?.retryCall?.body).success).toBe(true);
    expect(hold?.retryCall?.cli).toContain(`copyback recovery retry-export`);
    expect(hold?.retryCall?.cli).toContain(`--issue ${ISSUE} --action ${ACTION} --run ${RUN}`);
  });

  it("R-EX-5 an unconfirmed stop shows no receipt: a pending intent, or a receipt for another allocation, is not a stopped receipt", () => {
    const intent = { schema: "copyback.sandbox-stop-and-retain.v2", companyId: COMPANY, runId: RUN, leaseId: LEASE, providerLeaseId: "sbx-1", pluginId: "builtin.local", requestId: REQUEST, createdAt: "2026-12-01T12:00:00.000Z" };
    const pending = exportHoldDetails(exhaustedRow, facts({ sandboxStopAndRetain: intent }, "pending_cleanup"), null);
    expect(pending).toMatchObject({ stoppedReceipt: null, lease: { status: "pending_cleanup", stopPending: true } });
    const other = exportHoldDetails(exhaustedRow, facts({ sandboxStopAndRetainReceipt: { ...receipt, providerLeaseId: "sbx-other" } }), null);
    expect(other?.stoppedReceipt).toBeNull();
  });

  it("R-UA-3 a limit hold names the limit and offers no export-only retry call", () => {
    const row = {
      ...exhaustedRow,
      cause: EXPORT_LIMIT_CAUSE,
      evidence: {
        schema: EXPORT_LIMIT_EVIDENCE_SCHEMA,
        runId: RUN,
        resultId: null,
        leaseId: LEASE,
        providerLeaseId: "sbx-1",
        pluginId: "builtin.local",
        failureCode: "native_workspace_sync_out_entry_too_large",
        limit: { kind: "limit", violation: "entry_too_large", limit: "maxEntryBytes", max: 5, path: "huge.bin", violationCodes: ["entry_too_large"] },
        detectedAt: "2026-12-01T12:00:00.000Z",
      },
    };
    const hold = exportHoldDetails(row, facts({ sandboxStopAndRetainReceipt: receipt }), null);
    expect(hold).toMatchObject({ kind: "limit", limit: { violation: "entry_too_large", limit: "maxEntryBytes", max: 5, path: "huge.bin" }, retryCall: null });
  });

  it("R-UI-2 a copyback-failed hold shows the run, lease, stop receipt and attempts like the other file holds, what failed, whether host writes began, the conflicts, and its resolution path (restored, or a disposition)", () => {
    const row = {
      ...exhaustedRow,
      cause: COPYBACK_FAILED_CAUSE,
      evidence: {
        schema: COPYBACK_FAILED_EVIDENCE_SCHEMA,
        runId: RUN,
        resultId: null,
        leaseId: LEASE,
        leaseIds: [LEASE],
        providerLeaseId: "sbx-1",
        pluginId: "builtin.local",
        failure: "merge_conflict",
        failureCode: "workspace_merge_conflict",
        hostWritesStarted: false,
        conflictCount: 21,
        conflicts: [{ path: "src/a.ts", kind: "both_changed" }],
        bindingReason: null,
        pin: "pinned",
        detectedAt: "2026-12-01T12:00:00.000Z",
      },
    };
    const hold = exportHoldDetails(row, { ...facts({ sandboxStopAndRetainReceipt: receipt }), issueStatus: "blocked" }, "https://c.example");
    expect(hold).toMatchObject({
      kind: "copyback_failed",
      run: { id: RUN, status: "failed" },
      lease: { id: LEASE, providerLeaseId: "sbx-1", stopPending: false },
      stoppedReceipt: { method: "environmentStopLease", requestId: REQUEST },
      attempts: [{ attempt: 3 }],
      limit: null,
      retryCall: null,
      copybackFailure: {
        failure: "merge_conflict",
        failureInWords: expect.stringMatching(/conflict/i),
        failureCode: "workspace_merge_conflict",
        hostWritesStarted: false,
        conflictCount: 21,
        conflicts: [{ path: "src/a.ts", kind: "both_changed" }],
        bindingReason: null,
      },
    });
    const call = hold?.resolveCall;
    expect(call?.url).toBe(`https://c.example/api/issues/${ISSUE}/recovery-actions/resolve`);
    expect(call?.body).toMatchObject({ actionId: ACTION, outcome: "restored", sourceIssueStatus: "blocked", executionReconciliation: { runId: RUN, leaseId: LEASE, runStatus: "failed" } });
    expect(resolveRecoveryActionBody.safeParse(call?.body).success).toBe(true);
    expect(call?.cli).toContain("copyback recovery resolve");
    expect(call?.dispositionCli).toContain("--outcome false_positive");
    // Without the task's status there is nothing to prefill: no call, the details still shown.
    expect(exportHoldDetails(row, facts({}), null)).toMatchObject({ kind: "copyback_failed", resolveCall: null, copybackFailure: { failure: "merge_conflict" } });
  });

  it("R-UI-2 the other export holds carry no copyback failure and no resolve call", () => {
    expect(exportHoldDetails(exhaustedRow, facts({}), null)).toMatchObject({ copybackFailure: null, resolveCall: null });
  });

  it("other causes have no export hold details", () => {
    expect(exportHoldDetails({ ...exhaustedRow, cause: OWNER_UNVERIFIED_CAUSE }, facts({}), null)).toBeNull();
  });
});
