// Admission of an operator's Discard of a retained sandbox. Pure. A
// retained sandbox may hold the only copy of a run's work, so nothing discards one automatically:
// the request must name the provider's immutable allocation id recorded on the lease (so the
// operator destroys the sandbox they inspected, not one that replaced it), and acknowledge by id
// every open recovery action that still needs its files, no more and no fewer.
export interface DiscardSnapshot {
  lease: {
    status: string;
    providerLeaseId: string | null;
    /** lease-holds.ts: it holds files for recovery. */
    held: boolean;
    /** A cleanup claim (a stop, resume or destroy in flight) still running. */
    claimedByOther: boolean;
    /**
     * That claim: until when, and the request id of the discard intent on the lease, if any (an
     * earlier Discard in flight, or one whose request died and whose claim has not lapsed yet).
     */
    claim?: { until: string; discardRequestId: string | null } | null;
    /**
     * The phase of the lease's run's finalization when it still has an accepted result to copy
     * back on its own (result_accepted, workspace_finalizing, arbitrating, retryable_failure), else
     * null (none, committed, terminal: then a hold, if any, names what the files are for).
     */
    copybackPending?: string | null;
  } | null;
  /** Open recovery actions naming the lease. */
  openActionIds: readonly string[];
}

export interface DiscardRequest {
  providerLeaseId: string;
  acknowledgedActionIds: readonly string[];
  reason: string;
}

export type DiscardDecision =
  | { kind: "admit"; actionIds: string[] }
  | { kind: "reject"; code: DiscardRefusal; message: string; details?: Record<string, unknown> };

export type DiscardRefusal =
  | "lease_not_found"
  | "sandbox_already_destroyed"
  | "lease_failed"
  | "allocation_unnamed"
  | "allocation_mismatch"
  | "sandbox_not_retained"
  | "cleanup_in_progress"
  | "copyback_pending"
  | "acknowledgement_missing"
  | "acknowledgement_unknown"
  | "reason_required";

const reject = (code: DiscardRefusal, message: string, details?: Record<string, unknown>): DiscardDecision => ({ kind: "reject", code, message, ...(details ? { details } : {}) });

export function decideDiscard(snapshot: DiscardSnapshot, request: DiscardRequest): DiscardDecision {
  const { lease } = snapshot;
  if (!lease) return reject("lease_not_found", "No such sandbox lease in this company.");
  if (lease.status === "destroyed") return reject("sandbox_already_destroyed", "This sandbox was already destroyed.");
  if (lease.status === "failed") return reject("lease_failed", "This lease failed at acquisition; there is no sandbox to discard.");
  if (lease.providerLeaseId === null) return reject("allocation_unnamed", "The provider never named this allocation; it cannot be verified, so it is not discarded.");
  if (request.providerLeaseId !== lease.providerLeaseId) {
    return reject("allocation_mismatch", "The allocation id does not match the one recorded on the lease; nothing was destroyed.", { recorded: lease.providerLeaseId });
  }
  if (!lease.held) return reject("sandbox_not_retained", "This sandbox is not retained for recovery; the ordinary release handles it.");
  // R-ORP-3 ("the running run keeps its source lease until the finalizer completes"): the
  // run's saved result is still to be copied back from this very sandbox, by the live path or the
  // reconciler's retry; destroying it now would drop an accepted result that nobody gave up (and
  // tear an export mid-read). It becomes discardable once that copyback settles: committed (the
  // ordinary release then handles it), or ended in a hold.
  if (lease.copybackPending) {
    return reject("copyback_pending", `The run's saved result is still being copied back from this sandbox (${lease.copybackPending}); it is not discarded. Discard it after the copyback commits or ends in a hold.`, { phase: lease.copybackPending });
  }
  if (lease.claimedByOther) {
    const claim = lease.claim ?? null;
    // A Discard's claim is short and renewed while its request lives (sandboxes/discard-intent.ts):
    // if that request died, the claim lapses by `claimedUntil` and the reconciler, or a Discard then,
    // finishes it. Another cleanup's claim is its own (15 minutes, R-EX-5).
    if (claim?.discardRequestId) {
      return reject(
        "cleanup_in_progress",
        `A Discard of this sandbox (request ${claim.discardRequestId}) is in flight. If its request is gone, its claim lapses by ${claim.until}: the reconciler then finishes it, or Discard again.`,
        { discardRequestId: claim.discardRequestId, claimedUntil: claim.until },
      );
    }
    return reject("cleanup_in_progress", "A stop, resume or destroy of this sandbox is in flight; try again when it settled.", claim ? { claimedUntil: claim.until } : undefined);
  }
  if (request.reason.trim() === "") return reject("reason_required", "Say why the files are given up.");
  const open = new Set(snapshot.openActionIds);
  const acknowledged = new Set(request.acknowledgedActionIds);
  const unknown = [...acknowledged].filter((id) => !open.has(id));
  if (unknown.length > 0) {
    return reject("acknowledgement_unknown", "Acknowledged actions that are not open recovery actions of this sandbox.", { unknown });
  }
  const missing = [...open].filter((id) => !acknowledged.has(id));
  if (missing.length > 0) {
    return reject("acknowledgement_missing", "Every open recovery action that still needs these files must be named and acknowledged.", { missing });
  }
  return { kind: "admit", actionIds: [...open] };
}
