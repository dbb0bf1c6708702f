// The coordinator's state machine (DESIGN.md section 3), as a pure table:
//   observed -> result_accepted -> workspace_finalizing -> arbitrating -> committed
// with retryable_failure (a later sweep resumes) and terminal_failure on the way.
// `committed` and `terminal_failure` are final: a committed coordinator is never overwritten.
import type { FinalizationPhase } from "@copyback/db/client";

export type { FinalizationPhase };

export const FINALIZATION_PHASES = [
  "observed",
  "result_accepted",
  "workspace_finalizing",
  "arbitrating",
  "committed",
  "retryable_failure",
  "terminal_failure",
] as const satisfies readonly FinalizationPhase[];

const TRANSITIONS: Readonly<Record<FinalizationPhase, readonly FinalizationPhase[]>> = {
  observed: ["result_accepted", "terminal_failure"],
  result_accepted: ["workspace_finalizing", "retryable_failure", "terminal_failure"],
  // A reconciler that takes over a crashed finalizer stays in workspace_finalizing (attempt + 1).
  workspace_finalizing: ["workspace_finalizing", "arbitrating", "retryable_failure", "terminal_failure"],
  arbitrating: ["committed", "retryable_failure", "terminal_failure"],
  // A retry resumes the copyback, or goes straight to arbitration when the barrier already exists.
  retryable_failure: ["workspace_finalizing", "arbitrating", "terminal_failure"],
  committed: [],
  terminal_failure: [],
};

export function canTransition(from: FinalizationPhase, to: FinalizationPhase): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isFinalPhase(phase: FinalizationPhase): boolean {
  return TRANSITIONS[phase].length === 0;
}

/** R-EX-1: the failure code of an export whose retries are exhausted (the one readmissible terminal failure). */
export const EXPORT_RETRY_EXHAUSTED_CODE = "native_workspace_sync_out_retry_exhausted";

/**
 * R-EX-2, R-EX-3: an edge out of a final phase (the other: R-UA-5 below). A coordinator that settled terminal because
 * its export retry budget was spent (R-EX-1) goes back to result_accepted when an operator's
 * export-only retry is admitted (recovery/operator/retry-workspace-export.ts), so the SAME run
 * finalizes its saved result. No other failure code may take it: a conflict, a limit or a
 * failed commit stays final. The ordinary table above never allows it (canTransition).
 */
export const READMISSION_EDGE = { from: "terminal_failure", to: "result_accepted", failureCode: EXPORT_RETRY_EXHAUSTED_CODE } as const;

export function canReadmit(phase: FinalizationPhase, failureCode: string | null): boolean {
  return phase === READMISSION_EDGE.from && failureCode === READMISSION_EDGE.failureCode;
}

/**
 * R-UA-5: the failure code an older controller terminalized unsafe archives with. New
 * controllers never write it (unsafe archives salvage or omit, export-policy.ts).
 */
export const HISTORICAL_UNSAFE_ARCHIVE_CODE = "native_workspace_sync_out_unsafe_archive";

/**
 * R-UA-5: the one way back out of terminal_failure for a historical unsafe export: to
 * arbitrating, and only for that failure code (the table above keeps terminal_failure final for
 * everything else). The omission barrier is written in the same transaction, under finalization
 * ownership (recovery/sweeps/historical-unsafe-sweep.ts), so arbitrating always has its barrier.
 */
export function canReplayHistoricalUnsafe(from: FinalizationPhase, failureCode: string | null): boolean {
  return from === "terminal_failure" && failureCode === HISTORICAL_UNSAFE_ARCHIVE_CODE;
}
