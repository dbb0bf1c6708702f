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
  // R-ORP-1, R-ORP-2: an accepted result is the finalizer's, whatever phase its coordinator shows
  // (finalizing, due for it, or not caught up yet): never turned into process_lost here. This is
  // stricter than the binding R-ORP-1 names (same company, issue and run), and on purpose: a
  // result is immutable evidence, so no orphan write may race its finalization. The finalization
  // sweep owns such runs.
  if (s.acceptedResult !== null) return { kind: "leave", reason: "finalizer_owns" };
  return { kind: "process_lost" };
}
