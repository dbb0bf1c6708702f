// What finalizeRun answers its callers (the worker's run, the reconciler's sweep, the operator's
// export-only retry): each way a finalization can end, with what the caller needs to act on it.
import type { MergeConflict } from "../copyback/merge/errors";
import type { UnverifiedReason } from "../records/finalization-owner-receipt";
import type { ArbiterOutcome } from "../records/status-arbiter";
import type { NotFinalizableReason } from "./finalize-policy";

export interface MergeCounts {
  written: number;
  deleted: number;
  unchanged: boolean;
}

export type FinalizeOutcome =
  | { kind: "committed"; barrier: "written" | "reused"; operationId: string; counts: MergeCounts | null; arbiter: ArbiterOutcome }
  /** R-UA-3: the export stayed unsafe after salvage; it was omitted and the accepted result committed. */
  | { kind: "omitted_export_committed"; operationId: string; arbiter: ArbiterOutcome }
  | { kind: "already_committed" }
  | { kind: "conflict"; operationId: string; conflicts: MergeConflict[] }
  | { kind: "retryable_failure"; operationId: string | null; code: string; nextAttemptAt: Date }
  | { kind: "terminal_failure"; operationId: string | null; code: string }
  /** R-OWN-2, R-OWN-8: another owner holds the run (the lock, or a live recorded controller); nothing was written. */
  | { kind: "busy"; reason: "lock_held" | "owner_alive" | "owner_receipt_changed" }
  /**
   * R-OWN-11, R-ORP-4: a leftover receipt nobody can prove stopped. The board-owned hold is open
   * (actionId); the run, its result and its lease are kept; no provider turn.
   */
  | { kind: "owner_unverified"; actionId: string; reason: UnverifiedReason }
  | { kind: "not_finalizable"; reason: NotFinalizableReason };
