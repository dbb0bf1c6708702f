import { describe, expect, it } from "vitest";
import { decideStopRetention, type StopRetentionLease } from "./decide-stop-retention";

const RUN = "run-1";
const lease = (over: Partial<StopRetentionLease> = {}): StopRetentionLease => ({
  id: "lease-1",
  runId: RUN,
  status: "active",
  leasePolicy: "ephemeral",
  providerLeaseId: "alloc-1",
  hasStopIntent: false,
  hasConfirmedStopReceipt: false,
  competingOwner: false,
  ...over,
});

describe("decideStopRetention", () => {
  it("R-RC-7 pins an active source of any policy (warm allocations take the same retention path)", () => {
    for (const leasePolicy of ["ephemeral", "reuse_by_environment", "retain_on_failure"] as const) {
      expect(decideStopRetention(RUN, lease({ leasePolicy }))).toEqual({ kind: "pin", leaseId: "lease-1" });
    }
  });

  it("R-RC-7 has nothing to retain without a lease or an allocation", () => {
    expect(decideStopRetention(RUN, null)).toEqual({ kind: "record", outcome: "nothing_to_retain", reason: "no_lease", leaseId: null });
    expect(decideStopRetention(RUN, lease({ providerLeaseId: null }))).toMatchObject({ outcome: "nothing_to_retain", reason: "no_allocation" });
  });

  it("R-RC-7 a stopping (stop intent) or stopped (confirmed receipt) historical source is retained only under a non-reusable policy", () => {
    expect(decideStopRetention(RUN, lease({ status: "pending_cleanup", hasStopIntent: true }))).toMatchObject({ outcome: "retained", reason: "stopping" });
    expect(decideStopRetention(RUN, lease({ status: "released", hasConfirmedStopReceipt: true }))).toMatchObject({ outcome: "retained", reason: "stopped" });
    expect(decideStopRetention(RUN, lease({ status: "released", hasConfirmedStopReceipt: true, leasePolicy: "retain_on_failure" }))).toMatchObject({ outcome: "retained" });
    // A reusable released allocation may already have a new owner.
    expect(decideStopRetention(RUN, lease({ status: "released", hasConfirmedStopReceipt: true, leasePolicy: "reuse_by_environment" }))).toMatchObject({ outcome: "refused", reason: "reusable_source_not_active" });
    expect(decideStopRetention(RUN, lease({ status: "pending_cleanup", hasStopIntent: true, leasePolicy: "reuse_by_environment" }))).toMatchObject({ outcome: "refused", reason: "reusable_source_not_active" });
  });

  it("R-RC-7 a stopped source requires its stop-and-retain receipt and no competing allocation owner", () => {
    expect(decideStopRetention(RUN, lease({ status: "released" }))).toMatchObject({ outcome: "refused", reason: "stop_receipt_missing" });
    expect(decideStopRetention(RUN, lease({ status: "released", hasConfirmedStopReceipt: true, competingOwner: true }))).toMatchObject({ outcome: "refused", reason: "competing_allocation_owner" });
    expect(decideStopRetention(RUN, lease({ competingOwner: true }))).toMatchObject({ outcome: "refused", reason: "competing_allocation_owner" });
  });

  it("R-RC-7 refuses another run's lease, a pending destroy and a gone source", () => {
    expect(decideStopRetention(RUN, lease({ runId: "run-2" }))).toMatchObject({ outcome: "refused", reason: "lease_of_another_run" });
    expect(decideStopRetention(RUN, lease({ runId: null }))).toMatchObject({ outcome: "refused", reason: "lease_of_another_run" });
    expect(decideStopRetention(RUN, lease({ status: "pending_cleanup", hasStopIntent: false }))).toMatchObject({ outcome: "refused", reason: "destroy_pending" });
    expect(decideStopRetention(RUN, lease({ status: "destroyed" }))).toMatchObject({ outcome: "refused", reason: "source_destroyed" });
    expect(decideStopRetention(RUN, lease({ status: "failed" }))).toMatchObject({ outcome: "refused", reason: "source_failed" });
  });
});
