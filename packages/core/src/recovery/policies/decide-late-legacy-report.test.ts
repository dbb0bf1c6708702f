import { describe, expect, it } from "vitest";
import { LEGACY_LEASE_SNAPSHOT_SCHEMA, type LegacyLeaseSnapshot } from "../legacy/lease-snapshot";
import { STOP_RECEIPT_SCHEMA } from "../../leases/lease-metadata";
import { STOPPED_EXECUTION_RECEIPT_SCHEMA } from "../../records/stopped-execution-receipt";
import { decideLateLegacyReport, SNAPSHOT_FIELDS, type LateLegacyReportSnapshot, type SnapshotField } from "./decide-late-legacy-report";

const C = "00000000-0000-4000-8000-00000000000c";
const R = "00000000-0000-4000-8000-00000000000a";
const I = "00000000-0000-4000-8000-000000000001";
const W = "00000000-0000-4000-8000-000000000002";
const L = "00000000-0000-4000-8000-000000000003";
const Q = "00000000-0000-4000-8000-000000000004";
const acquiredAt = "2026-12-01T10:00:00.000Z";

const snap: LegacyLeaseSnapshot = {
  schema: LEGACY_LEASE_SNAPSHOT_SCHEMA, companyId: C, runId: R, issueId: I, executionWorkspaceId: W, leaseId: L, provider: "local",
  providerLeaseId: "sb-1", acquiredAt, pluginId: "builtin.local", realizedRoot: "/srv/ws", leasePolicy: "ephemeral", recordedAt: acquiredAt,
};
const receipt = { schema: STOP_RECEIPT_SCHEMA, method: "environmentStopLease", requestId: Q, pluginId: "builtin.local", providerLeaseId: "sb-1", stoppedAt: acquiredAt };

function base(): LateLegacyReportSnapshot {
  return {
    report: { companyId: C, runId: R },
    run: { id: R, companyId: C, issueId: I, status: "cancelled", runtimeMode: "legacy", runnerProfile: { stopAcknowledgement: { schema: STOPPED_EXECUTION_RECEIPT_SCHEMA, requestId: Q, acknowledgedAt: acquiredAt, leaseId: L } } },
    snapshot: { kind: "present", snapshot: snap },
    lease: { id: L, companyId: C, runId: R, issueId: I, executionWorkspaceId: W, provider: "local", providerLeaseId: "sb-1", acquiredAt: new Date(acquiredAt), pluginId: "builtin.local", leasePolicy: "ephemeral", status: "released", metadata: { sandboxStopAndRetainReceipt: receipt } },
    currentRealizedRoot: "/srv/ws",
    competingOwner: false,
    alreadyRecorded: false,
  };
}

/** The snapshot with one R-LG-1 field of the current state changed. */
function changed(field: SnapshotField): LateLegacyReportSnapshot {
  const s = base();
  const lease = s.lease!;
  switch (field) {
    case "company": return { ...s, snapshot: { kind: "present", snapshot: { ...snap, companyId: Q } } };
    case "run": return { ...s, snapshot: { kind: "present", snapshot: { ...snap, runId: Q } } };
    case "issue": return { ...s, lease: { ...lease, issueId: Q } };
    case "workspace": return { ...s, lease: { ...lease, executionWorkspaceId: Q } };
    case "provider": return { ...s, lease: { ...lease, provider: "fake" } };
    case "allocation": return { ...s, lease: { ...lease, providerLeaseId: "sb-2" } };
    case "acquisitionTime": return { ...s, lease: { ...lease, acquiredAt: new Date(Date.parse(acquiredAt) + 1) } };
    case "plugin": return { ...s, lease: { ...lease, pluginId: "other" } };
    case "realizedRoot": return { ...s, currentRealizedRoot: "/srv/other" };
  }
}

describe("decideLateLegacyReport", () => {
  it("R-LG-1 admits the exact, stopped, originally ephemeral source with both receipts", () => {
    expect(decideLateLegacyReport(base())).toEqual({ kind: "admit", snapshot: snap });
  });
  it.each(SNAPSHOT_FIELDS)("R-LG-1 a changed %s fails closed and names the field", (field) => {
    expect(decideLateLegacyReport(changed(field))).toMatchObject({ kind: "reject", field });
  });
  it("R-LG-1 an unknown realized root fails closed", () => {
    expect(decideLateLegacyReport({ ...base(), currentRealizedRoot: null })).toMatchObject({ kind: "reject", field: "realizedRoot" });
  });
  it("R-LG-2 reusable leases never enter; a missing or invalid snapshot adopts nothing", () => {
    expect(decideLateLegacyReport({ ...base(), snapshot: { kind: "present", snapshot: { ...snap, leasePolicy: "reuse_by_environment" } } })).toMatchObject({ code: "reusable_lease" });
    expect(decideLateLegacyReport({ ...base(), snapshot: { kind: "missing" } })).toMatchObject({ code: "snapshot_missing" });
    expect(decideLateLegacyReport({ ...base(), snapshot: { kind: "invalid", message: "x" } })).toMatchObject({ code: "snapshot_invalid" });
  });
  it("R-LG-1 the current lease must still be ephemeral, released, with its stop receipt; the run cancelled with its stopped-execution receipt; no competing owner", () => {
    const s = base();
    expect(decideLateLegacyReport({ ...s, lease: { ...s.lease!, leasePolicy: "reuse_by_environment" } })).toMatchObject({ code: "not_ephemeral" });
    expect(decideLateLegacyReport({ ...s, lease: { ...s.lease!, status: "pending_cleanup" } })).toMatchObject({ code: "lease_not_released" });
    expect(decideLateLegacyReport({ ...s, lease: { ...s.lease!, metadata: {} } })).toMatchObject({ code: "stop_receipt_missing" });
    expect(decideLateLegacyReport({ ...s, run: { ...s.run!, runnerProfile: {} } })).toMatchObject({ code: "execution_receipt_missing" });
    expect(decideLateLegacyReport({ ...s, run: { ...s.run!, status: "running" } })).toMatchObject({ code: "run_not_cancelled" });
    expect(decideLateLegacyReport({ ...s, run: { ...s.run!, runtimeMode: "native" } })).toMatchObject({ code: "run_not_legacy" });
    expect(decideLateLegacyReport({ ...s, lease: null })).toMatchObject({ code: "lease_missing" });
    expect(decideLateLegacyReport({ ...s, competingOwner: true })).toMatchObject({ code: "competing_owner" });
    expect(decideLateLegacyReport({ ...s, alreadyRecorded: true })).toEqual({ kind: "already_recorded" });
  });
});
