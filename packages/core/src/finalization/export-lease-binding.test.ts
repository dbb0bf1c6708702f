import { describe, expect, it } from "vitest";
import { decideExportLease, type ExportLeaseRow } from "./export-lease-binding";

const run = { companyId: "c1", runId: "r1", leaseId: "l1", seededProviderLeaseId: "sbx-1" };
const lease: ExportLeaseRow = { id: "l1", companyId: "c1", runId: "r1", pluginId: "builtin.local", providerLeaseId: "sbx-1", status: "active", destroyIntent: false };

describe("decideExportLease", () => {
  it("exports the seeded allocation of the run's own lease: active, stopped and released, or with a stop in flight", () => {
    for (const status of ["active", "released", "pending_cleanup"] as const) {
      expect(decideExportLease({ ...lease, status }, run)).toEqual({ kind: "bound", handle: { leaseId: "l1", pluginId: "builtin.local", providerLeaseId: "sbx-1" } });
    }
  });

  it("R-EX-6: refuses a lease bound to another run, another allocation, a gone or failed sandbox, or one being destroyed", () => {
    const refused = (row: Partial<ExportLeaseRow>) => decideExportLease({ ...lease, ...row }, run);
    expect(refused({ runId: "r2" })).toMatchObject({ kind: "refused", code: "finalization_lease_not_bound", details: { why: "run", leaseRunId: "r2" } });
    expect(refused({ runId: null })).toMatchObject({ kind: "refused", code: "finalization_lease_not_bound", details: { why: "run" } });
    expect(refused({ providerLeaseId: "sbx-2" })).toMatchObject({ kind: "refused", code: "finalization_lease_not_bound", details: { why: "allocation" } });
    expect(refused({ status: "destroyed" })).toMatchObject({ kind: "refused", code: "finalization_lease_not_bound", details: { why: "status", leaseStatus: "destroyed" } });
    expect(refused({ status: "failed" })).toMatchObject({ kind: "refused", code: "finalization_lease_not_bound", details: { why: "status" } });
    expect(refused({ status: "pending_cleanup", destroyIntent: true })).toMatchObject({ kind: "refused", code: "finalization_lease_not_bound", details: { why: "status" } });
  });

  it("a missing lease, another company's, another row or one never allocated is missing", () => {
    expect(decideExportLease(null, run)).toMatchObject({ kind: "refused", code: "finalization_lease_missing" });
    expect(decideExportLease({ ...lease, companyId: "c2" }, run)).toMatchObject({ kind: "refused", code: "finalization_lease_missing" });
    expect(decideExportLease({ ...lease, id: "l2" }, run)).toMatchObject({ kind: "refused", code: "finalization_lease_missing" });
    expect(decideExportLease({ ...lease, providerLeaseId: null }, run)).toMatchObject({ kind: "refused", code: "finalization_lease_missing" });
  });
});
