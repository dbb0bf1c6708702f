// What the checker judges with and answers: the hold causes it knows (records/causes.ts), the
// violation kinds, and the verdict with its counts (check.ts fills it, counts.ts prints it).
import type { Completion } from "../history";
import type { HostCounts } from "./hosts";

export const OWNER_UNVERIFIED = "native_workspace_finalization_owner_unverified";
/** R-FO-1: the obligation a run that failed before its result opens (records/causes.ts). */
export const FILE_RECOVERY = "native_workspace_file_recovery_required";
/**
 * The causes that hold an accepted result (records/causes.ts): an unverified owner, an exhausted
 * export retry budget, an export over a limit, and a copyback that failed for
 * good (a merge conflict, a changed binding, a terminal failure): each keeps the result and its
 * sandbox for an operator. Any other cause (a file-recovery obligation) does not apply the result.
 */
export const RESULT_HOLD_CAUSES = new Set([OWNER_UNVERIFIED, "native_workspace_sync_out_retry_exhausted", "native_workspace_sync_out_limit_exceeded", "native_workspace_sync_out_failed"]);
export const OPEN = new Set(["active", "escalated"]);
export const UNSETTLED_PHASES = new Set(["observed", "result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"]);

export const VIOLATION_KINDS = [
  "concurrent_writers",
  "concurrent_owners",
  "double_copy",
  "commit_without_barrier",
  "accepted_result_dropped",
  "accepted_not_settled",
  "duplicate_holds",
  "hold_wrong_cause",
  "lost_file",
  "torn_file",
  "uncommitted_write",
  "committed_overwritten",
  "unexpected_file",
  "baseline_changed",
  "unsafe_link_on_host",
  "held_sandbox_destroyed",
  "held_sandbox_reused",
  "run_left_running",
  "run_left_queued",
  "lease_active_without_run",
  "coordinator_unsettled",
  "died_before_result_unrecovered",
  "retention_claimed_falsely",
  "provenance",
  "held_lease_taken",
  "retained_invisible",
  "discard_unfinished",
  "history_unpaired",
  "takeover_while_group_live",
  "harness_takeover_missing",
  "refusal_after_proof",
  "dt_stop_auto_delete_enabled",
  "dt_kept_sandbox_auto_deleted",
  "dt_stopped_allocation_deleted",
  "cross_host_write",
  "wrong_host_claim",
  "wrong_host_finalize",
  "wrong_host_sweep",
  "wrong_host_cleanup",
  "dead_host_run_lost",
] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

export interface Violation {
  kind: ViolationKind;
  detail: string;
  runId?: string;
}

export interface Verdict {
  violations: Violation[];
  counts: {
    runs: number;
    runsByStatus: Record<string, number>;
    commits: number;
    acceptedResults: number;
    holdsByCause: Record<string, number>;
    openHoldsByCause: Record<string, number>;
    /** Attestations that took effect (ok, answered attested). */
    attestations: number;
    /** Faults that took effect (ok completions), by kind. */
    faultsByKind: Record<string, number>;
    faults: number;
    /** Faults whose outcome is unknown (info: a restart or a termination that did not answer). */
    faultsIndeterminate: number;
    /** Every operation of the harness by function: ok, fail and info apart (checker/operations.ts). */
    operations: Record<string, Record<Completion, number>>;
    mergeIntervals: number;
    /** Stop requests the clients sent (Stop racing the agent's finish), by answer: the outcome, the refusal's code, or info. */
    stopsByOutcome: Record<string, number>;
    /** Retained sandboxes the harness's operator verified and discarded (operator.ts): Discards that completed ok. */
    operatorDiscards: number;
    /** Lease acquisitions that reused a released lease. */
    reuses: number;
    /** Leases released by policy ("failed") after a transient export failure while their run's accepted result waited for its retry. */
    unsettledReleases: number;
    /** Other runs' acquisitions on the same environment and workspace while such a lease waited (each could have been handed it). */
    acquisitionsBesideUnsettled: number;
    /** Of all acquisitions, those handed a held lease (the violations held_lease_taken). */
    heldLeaseTaken: number;
    relaxed: Record<string, number>;
    /** `--hosts 2` only (hosts.ts): what the host rules saw. */
    hosts?: HostCounts;
    violationsByKind: Record<string, number>;
  };
}

export const bump = (map: Record<string, number>, key: string, n = 1) => {
  map[key] = (map[key] ?? 0) + n;
};
