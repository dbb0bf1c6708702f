// What `copyback recovery resolve --help` says about holds and evidence, printed from
// resolvable-holds.ts, the table the resolution policy admits and refuses by and the request schema
// requires each outcome's evidence by (so the help never names fewer holds than the command accepts). The
// flags of each request field are here too, for the command's own refusals (recovery-resolve.ts).
import { HOLDS_RESOLVED_ELSEWHERE, OUTCOME_REQUIRES, RESOLVABLE_HOLDS, RESOLVE_OUTCOMES } from "../../recovery/resolvable-holds";

/** The command-line flags of each field of the request body (resolveRecoveryActionBody). */
export const RESOLVE_FLAG_OF: Readonly<Record<string, string>> = {
  actionId: "--action",
  outcome: "--outcome",
  sourceIssueStatus: "--source-status",
  executionReconciliation: "--run / --lease / --run-status",
  workspaceRepairEvidence: "--stop-evidence / --recovered-files",
  note: "--note",
};

export const DEFAULT_RESOLVE_OUTCOME = RESOLVE_OUTCOMES[0];

/** The outcomes that cannot go without a note (the --note option's help). */
export const OUTCOMES_NEEDING_NOTE = RESOLVE_OUTCOMES.filter((outcome) => OUTCOME_REQUIRES[outcome] === "note");

/** What each outcome's required field asks of the operator, and what the service checks beside it. */
const OUTCOME_WORDS: Readonly<Record<(typeof RESOLVE_OUTCOMES)[number], string>> = {
  restored: "the files are recovered; the lease must be released with its confirmed stop receipt (a cancelled run: also its stopped-execution receipt)",
  false_positive: "a deliberate board disposition: the hold was raised in error; no receipt is checked",
  cancelled: "a deliberate board disposition: the files are given up (a discarded sandbox); no receipt is checked",
  reverify: "the agent-pack verification hold only: the provider answers again; the held run (--run-status queued, no --lease) reads its pack again with a fresh budget",
};

function columns(rows: readonly (readonly [string, string])[]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

export function resolveHelpText(): string {
  return [
    "",
    "Holds it resolves (cause, what it is, the outcomes it accepts):",
    ...columns(
      RESOLVABLE_HOLDS.map(
        (hold) => [hold.cause, `${hold.name} (${hold.rules}; ${hold.outcomes.join(", ")})${hold.needsRetainedSourceRecord ? "; restored also needs the lease's retained-source record" : ""}`] as const,
      ),
    ),
    "",
    `Evidence by --outcome (always: --source-status, --run, --run-status, and --lease when the action records one):`,
    ...columns(
      RESOLVE_OUTCOMES.map((outcome) => [
        `${outcome}${outcome === DEFAULT_RESOLVE_OUTCOME ? " (default)" : ""}`,
        `${RESOLVE_FLAG_OF[OUTCOME_REQUIRES[outcome]]}: ${OUTCOME_WORDS[outcome]}`,
      ] as const),
    ),
    "",
    "Refused here, nothing written (cause, what it is, the command that settles it, the refusal's code):",
    ...columns(HOLDS_RESOLVED_ELSEWHERE.map((hold) => [hold.cause, `${hold.name} (${hold.rules}): ${hold.command} (${hold.code})`] as const)),
    "  any other cause: action_not_resolvable",
    "",
    "`copyback recovery show ACTION_ID` shows the action's run, lease and evidence (for a copyback-failed hold, this call prefilled).",
  ].join("\n");
}
