// R-RC-7: what Stop does with the workspace a cancelled run prepared before its finish call
// (pure). Used by the executor when it cancels the run and by the stop-retention sweep for older
// acknowledged cancellations that missed the step. Only the exact source counts: the lease the run
// itself acquired.
//
//   active (any policy)            pin it: a stop-only intent, then the ordinary stop-and-retain
//                                  ("active warm allocations keep the same retention retry path")
//   pending_cleanup + stop intent  already stopping: retained, if its policy is not reusable
//   released + stop receipt        already stopped: retained, if its policy is not reusable and no
//                                  other unsettled lease claims the same allocation
//   anything else                  refused with the reason (never a release, destroy or adoption)
//
// "Only historical stopping or stopped sources require the ephemeral policy, because a reusable
// released allocation may already have a new owner": `reuse_by_environment` is refused there;
// `retain_on_failure` is never handed to another run either, so it counts as non-reusable.
export interface StopRetentionLease {
  id: string;
  runId: string | null;
  status: "active" | "released" | "pending_cleanup" | "destroyed" | "failed";
  leasePolicy: "ephemeral" | "reuse_by_environment" | "retain_on_failure";
  providerLeaseId: string | null;
  hasStopIntent: boolean;
  hasConfirmedStopReceipt: boolean;
  /** Another unsettled lease claims the same plugin and allocation. */
  competingOwner: boolean;
}

export type StopRetentionDecision =
  | { kind: "pin"; leaseId: string }
  | { kind: "record"; outcome: "retained" | "nothing_to_retain" | "refused"; reason: string; leaseId: string | null };

export function decideStopRetention(runId: string, lease: StopRetentionLease | null): StopRetentionDecision {
  if (!lease) return { kind: "record", outcome: "nothing_to_retain", reason: "no_lease", leaseId: null };
  const record = (outcome: "retained" | "nothing_to_retain" | "refused", reason: string) => ({ kind: "record" as const, outcome, reason, leaseId: lease.id });
  if (lease.runId !== runId) return record("refused", "lease_of_another_run");
  if (lease.competingOwner) return record("refused", "competing_allocation_owner");
  switch (lease.status) {
    case "active":
      if (!lease.providerLeaseId) return record("nothing_to_retain", "no_allocation");
      return { kind: "pin", leaseId: lease.id };
    case "pending_cleanup":
      if (!lease.hasStopIntent) return record("refused", "destroy_pending");
      if (lease.leasePolicy === "reuse_by_environment") return record("refused", "reusable_source_not_active");
      return record("retained", "stopping");
    case "released":
      if (!lease.hasConfirmedStopReceipt) return record("refused", "stop_receipt_missing");
      if (lease.leasePolicy === "reuse_by_environment") return record("refused", "reusable_source_not_active");
      return record("retained", "stopped");
    case "destroyed":
      return record("refused", "source_destroyed");
    case "failed":
      return record("refused", "source_failed");
  }
}
