// Which recovery holds the generic resolution (POST .../recovery-actions/resolve, `copyback
// recovery resolve`) resolves, which it refuses and sends elsewhere, and what each outcome needs.
// ONE table: decide-resolve.ts admits and refuses by it, the request schema
// (operator/resolve-recovery-action.ts) requires each outcome's evidence by it, and the CLI's help
// (cli/recovery/resolve-help.ts) is printed from it, so the help cannot name a different set of
// holds than the command accepts. Pure data; no database.
import {
  COPYBACK_FAILED_CAUSE,
  EXPORT_LIMIT_CAUSE,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
  FILE_RECOVERY_CAUSE,
  LEGACY_COPYBACK_REPAIR_CAUSE,
  OWNER_UNVERIFIED_CAUSE,
  PACK_VERIFICATION_UNAVAILABLE_CAUSE,
} from "../records/causes";

export const RESOLVE_OUTCOMES = ["restored", "false_positive", "cancelled", "reverify"] as const;
export type ResolveOutcome = (typeof RESOLVE_OUTCOMES)[number];

export interface ResolvableHold {
  cause: string;
  /** What the hold is, in the words the console and the README use. */
  name: string;
  rules: string;
  /**
   * R-RR-2, R-RR-5: a "restored" repair also needs the lease's retained-source record (the legacy
   * path writes one when it retains the allocation; the native holds pin it by their stop-only
   * intent, and a record, when present, must still match).
   */
  needsRetainedSourceRecord: boolean;
  /** The outcomes this hold accepts (another one is refused with outcome_not_applicable). */
  outcomes: readonly ResolveOutcome[];
}

const FILE_HOLD_OUTCOMES: readonly ResolveOutcome[] = ["restored", "false_positive", "cancelled"];

// File holds: no automatic path gets past them, so an operator recovers the files by hand from the
// retained sandbox and records it ("restored"), or disposes of the hold deliberately. The
// agent-pack verification hold (R-PV-1) holds no files: it is resolved by "reverify".
export const RESOLVABLE_HOLDS: readonly ResolvableHold[] = [
  { cause: LEGACY_COPYBACK_REPAIR_CAUSE, name: "legacy repair hold", rules: "R-RR-2", needsRetainedSourceRecord: true, outcomes: FILE_HOLD_OUTCOMES },
  { cause: FILE_RECOVERY_CAUSE, name: "file-recovery obligation", rules: "R-FO-1, R-FO-5", needsRetainedSourceRecord: false, outcomes: FILE_HOLD_OUTCOMES },
  // R-UA-3: an archive over a limit: no retry can get past it.
  { cause: EXPORT_LIMIT_CAUSE, name: "archive-limit hold", rules: "R-UA-3", needsRetainedSourceRecord: false, outcomes: FILE_HOLD_OUTCOMES },
  // R-EX-4, R-UI-2: a conflict, a task that moved on, a failed write: nothing retries it.
  { cause: COPYBACK_FAILED_CAUSE, name: "copyback-failed hold", rules: "R-EX-4, R-UI-2", needsRetainedSourceRecord: false, outcomes: FILE_HOLD_OUTCOMES },
  // R-PV-1: the agent pack could not be verified (two inconclusive reads) before the run's first
  // turn: no files to recover. `reverify` gives the held run a fresh read budget; to give it up,
  // Stop it, then close the hold deliberately.
  { cause: PACK_VERIFICATION_UNAVAILABLE_CAUSE, name: "agent-pack verification hold", rules: "R-PV-1", needsRetainedSourceRecord: false, outcomes: ["reverify", "false_positive", "cancelled"] },
];

export interface HoldResolvedElsewhere {
  cause: string;
  name: string;
  rules: string;
  /** The stable refusal code of the generic resolution. */
  code: "hold_requires_attestation" | "hold_requires_export_retry";
  /** The CLI command that settles it instead. */
  command: string;
  message: string;
}

// R-ATT-3, R-EX-3: holds the generic resolution never dismisses, whatever the outcome asked for.
export const HOLDS_RESOLVED_ELSEWHERE: readonly HoldResolvedElsewhere[] = [
  {
    cause: OWNER_UNVERIFIED_CAUSE,
    name: "unverified copyback owner",
    rules: "R-ATT-3",
    code: "hold_requires_attestation",
    command: "copyback recovery attest",
    message:
      "An unverified copyback owner hold cannot be resolved here: attest the stop (POST /api/issues/:id/recovery-actions/resume-workspace-finalization); the run's committed copyback then resolves it.",
  },
  {
    cause: EXPORT_RETRY_EXHAUSTED_CAUSE,
    name: "export retries exhausted",
    rules: "R-EX-3",
    code: "hold_requires_export_retry",
    command: "copyback recovery retry-export",
    message: "An export-only-retry hold cannot be resolved here: request the export-only retry (POST /api/issues/:id/recovery-actions/retry-workspace-export); its commit resolves the hold.",
  },
];

/** The request field each outcome cannot go without (R-RR-5, R-FO-5: evidence; a disposition: a note). */
export const OUTCOME_REQUIRES: Readonly<Record<ResolveOutcome, "workspaceRepairEvidence" | "note">> = {
  restored: "workspaceRepairEvidence",
  false_positive: "note",
  cancelled: "note",
  // R-PV-1: what the operator restored (the provider's command channel) before asking again.
  reverify: "note",
};

export function resolvableHold(cause: string): ResolvableHold | undefined {
  return RESOLVABLE_HOLDS.find((hold) => hold.cause === cause);
}

export function holdResolvedElsewhere(cause: string): HoldResolvedElsewhere | undefined {
  return HOLDS_RESOLVED_ELSEWHERE.find((hold) => hold.cause === cause);
}
