// Which finalization staging directories are leftovers (pure). finalizeRun removes an attempt's
// `staging/<runId>-<n>` itself when the attempt ends (n: the run's staging sequence, never reused,
// also across re-admissions: finalize-run.ts stagingSequence), but a controller killed mid-copy
// cannot: the attested or resumed copyback then runs as a new attempt in a new directory and
// commits, and the dead attempt's directory (up to a whole exported workspace) stayed on disk for
// good (seen in a product walk, 2026-12-02: kill -9 mid-copy, attest, commit, `staging/<run>-1`
// left behind). Only the run's own finalization ever writes there, so once its coordinator
// settled (committed, or failed for good) no attempt of it is running and every directory of it
// may go. An in-flight run's directories are left alone, even older attempts': proving that an
// earlier owner stopped is the ownership rules' job (R-OWN-11), not this cleanup's. Names that are
// not `<uuid>-<attempt>` (the legacy copy-back's `<runId>-legacy`, the CLI's own) are never touched.
import type { FinalizationPhase } from "@copyback/db/client";

const ATTEMPT_DIR = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})-([1-9][0-9]{0,9})$/;

/** The run and attempt a staging directory's name says it belongs to, or null when it is not one of finalizeRun's. */
export function parseAttemptDirName(name: string): { runId: string; attempt: number } | null {
  const match = ATTEMPT_DIR.exec(name);
  if (!match) return null;
  return { runId: match[1] as string, attempt: Number(match[2]) };
}

/** Phases after which no attempt of the run is in progress (a re-admitted run starts a new, higher attempt). */
export const SETTLED_PHASES: readonly FinalizationPhase[] = ["committed", "terminal_failure"];

export type LeftoverDecision = { remove: true } | { remove: false; reason: "not_an_attempt" | "no_coordinator" | "in_flight" };

export function decideLeftoverStaging(name: string, coordinator: { phase: FinalizationPhase } | null): LeftoverDecision {
  if (parseAttemptDirName(name) === null) return { remove: false, reason: "not_an_attempt" };
  // No record to judge by: kept (a directory is only made after its coordinator moved).
  if (coordinator === null) return { remove: false, reason: "no_coordinator" };
  return SETTLED_PHASES.includes(coordinator.phase) ? { remove: true } : { remove: false, reason: "in_flight" };
}
