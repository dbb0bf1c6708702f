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
