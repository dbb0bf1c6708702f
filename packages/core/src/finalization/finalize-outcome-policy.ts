// What happens to a run's lease after a finalizeRun outcome, pure. One rule for the live path
// (executeRun) and the reconciler's finalization sweep.
//   committed (also omitted, already committed)  -> release by policy as "committed"
//   conflict, terminal or retryable failure      -> release by policy as "failed": stop and retain,
//                                                   the files survive for the retry or the recovery
//   busy, owner unverified                        -> keep: another owner copies from this lease, or
//                                                   the hold needs it intact (R-ORP-3)
//   not finalizable: phase changed / retry not due -> keep (someone else moved the run)
//   not finalizable otherwise                      -> "failed" (nothing more will finalize it)
import type { FinalizeOutcome } from "./finalize-outcome";

export function leaseOutcomeAfterFinalize(outcome: FinalizeOutcome): "committed" | "failed" | null {
  switch (outcome.kind) {
    case "committed":
    case "omitted_export_committed":
    case "already_committed":
      return "committed";
    case "conflict":
    case "terminal_failure":
    case "retryable_failure":
      return "failed";
    case "busy":
    case "owner_unverified":
      return null;
    case "not_finalizable":
      return outcome.reason === "phase_changed" || outcome.reason === "retry_not_due" ? null : "failed";
  }
}
