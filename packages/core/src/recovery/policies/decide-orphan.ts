// Generic orphan handling of a running native run whose controller is gone, pure (R-ORP-1..3).
// The finalizer owns the unfinished suffix of an accepted result: while the coordinator is in a
// finalization phase with an accepted result bound to the same company, issue and run, a missing
// agent or controller PID never becomes `process_lost`, also before the finalizer took its
// receipt. The heartbeat's phase or profile alone does not establish this: the coordinator row
// and the result row do.
import type { FinalizationPhase } from "@copyback/db/client";
import type { ProcessLiveness } from "../../process/process-identity";

export const FINALIZER_OWNED_PHASES: readonly FinalizationPhase[] = ["result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"];

export interface OrphanSnapshot {
  controller: ProcessLiveness;
  coordinator: { phase: FinalizationPhase; resultId: string | null; companyId: string; issueId: string } | null;
  run: { companyId: string; issueId: string };
  /** The run's accepted result bound to its company, issue and run, or null. */
  acceptedResult: { id: string; companyId: string; issueId: string } | null;
}

export type OrphanDecision =
  | { kind: "leave"; reason: "controller_alive" | "controller_unobservable" | "finalizer_owns" }
  /** A settled coordinator under a running run: end the run the way the coordinator ended. */
  | { kind: "settle"; as: "committed" | "terminal_failure" }
  /** No accepted result: the run ends `process_lost` (conditional on xmin and the result, R-ORP-2). */
  | { kind: "process_lost" };

export function decideOrphan(s: OrphanSnapshot): OrphanDecision {
  if (s.controller.kind === "alive") return { kind: "leave", reason: "controller_alive" };
  if (s.controller.kind === "unknown") return { kind: "leave", reason: "controller_unobservable" };
  const c = s.coordinator;
  if (c?.phase === "committed") return { kind: "settle", as: "committed" };
  if (c?.phase === "terminal_failure") return { kind: "settle", as: "terminal_failure" };
  // Stryker disable ConditionalExpression,EqualityOperator: equivalent, `bound` never changes the outcome: its branch returns what the accepted-result rule below returns anyway
  const bound =
    c !== null &&
    s.acceptedResult !== null &&
    c.resultId === s.acceptedResult.id &&
    c.companyId === s.run.companyId &&
    c.issueId === s.run.issueId &&
    s.acceptedResult.companyId === s.run.companyId &&
    s.acceptedResult.issueId === s.run.issueId;
  // R-ORP-1: an accepted result being finalized (or due for it) belongs to the finalizer.
  if (bound && FINALIZER_OWNED_PHASES.includes(c.phase)) return { kind: "leave", reason: "finalizer_owns" };
  // Stryker restore ConditionalExpression,EqualityOperator
  // R-ORP-2: also an accepted result with a coordinator that has not caught up yet is never lost.
  if (s.acceptedResult !== null) return { kind: "leave", reason: "finalizer_owns" };
  return { kind: "process_lost" };
}
