// What the task view shows about recovery, derived in ONE place (DESIGN.md section 8; R-UI-1,
// R-UI-2, R-UI-5). Pure: open recovery actions and the task's runs in, one notice out.
//   - normal work (no notice) while a live run or an eligible bounded retry exists and nothing
//     is held;
//   - "Restoring saved work…" once the server confirmed recovery or an operator queued it (an
//     unverified-owner hold with a recorded attestation), until commitment resolves it;
//   - "Continuing from saved sources…" while an operator's "Continue from saved sources" intent
//     waits for its delivery (R-RC-3: the decision is recorded, nothing for a person to do); while
//     its delivery is deferred by a transient refusal (R-RC-5), one sentence says what it waits for;
//   - a compact operator-attention notice with "Inspect run" otherwise; after a refused delivery
//     (the decision no longer holds, R-RC-5) it says in plain words what a person must do.
// A delivered intent resolved its hold, so the task shows normal work (or its other holds).
// The notice never carries a process id, host name, token, shutdown form or resume control;
// diagnostics live under "Recovery details" for the roles allowed to see them.
import {
  COPYBACK_FAILED_CAUSE,
  EXPORT_LIMIT_CAUSE,
  EXPORT_RETRY_EXHAUSTED_CAUSE,
  FILE_RECOVERY_CAUSE,
  LEGACY_COPYBACK_REPAIR_CAUSE,
  OWNER_UNVERIFIED_CAUSE,
  PACK_VERIFICATION_UNAVAILABLE_CAUSE,
} from "../records/causes";
import { isOpenRecoveryActionStatus } from "../records/actions/open-statuses";

export interface NoticeAction {
  id: string;
  cause: string;
  status: string;
  runId: string | null;
  /** The operator's attestation (or another confirmed recovery) is recorded: recovery is queued. */
  recoveryQueued: boolean;
  /** An operator discarded the sandbox this action needed (its files were given up). */
  filesGivenUp?: boolean;
  createdAt: Date;
  /**
   * R-RC-3, R-RC-5: the reconstruction intent recorded for this hold ("Continue from saved
   * sources"), absent when none was. `refusalCode`: why its delivery was refused and the intent
   * cancelled (core's refusal code), when its status is cancelled and a reason was recorded.
   */
  reconstruction?: { status: "pending" | "delivered" | "cancelled"; refusalCode: string | null; deferral?: ReconstructionDeferral | null } | null;
}

/**
 * R-RC-3, R-RC-5: why a pending intent's delivery waits, as the delivery sweep recorded it on the
 * intent (reconstruction_intents.deferral_*): the transient refusal's code, since when this code
 * holds, and when the sweep last saw it.
 */
export interface ReconstructionDeferral {
  code: string;
  since: Date;
  lastSeenAt: Date;
}

export type TaskNotice =
  | { kind: "none" }
  | { kind: "restoring"; runId: string | null; message: string; /** R-RC-3: what a deferred delivery waits for (one sentence). */ waiting?: string }
  | { kind: "attention"; runId: string | null; actionId: string; cause: string; message: string };

export const RESTORING_MESSAGE = "Restoring saved work…";
// R-RC-3: not "restoring": the lost edits are not recovered, a fresh session rebuilds them.
export const CONTINUING_MESSAGE = "Continuing from saved sources…";

const ATTENTION_MESSAGES: Readonly<Record<string, string>> = {
  [OWNER_UNVERIFIED_CAUSE]:
    "Saving this task's work back to the workspace was interrupted. The work and its result are kept; an administrator needs to confirm before it continues.",
  [EXPORT_RETRY_EXHAUSTED_CAUSE]:
    "Saving this task's work back to the workspace kept failing. The work and its result are kept; an operator needs to repair the connection before it continues.",
  // R-FO-1, R-UI-2: a run that ended before its result; its files wait in the kept sandbox. The
  // task's own user is never asked to certify anything: an operator recovers the files.
  [FILE_RECOVERY_CAUSE]: "This task's last run stopped before it finished. The files it wrote are kept in its sandbox; an operator needs to recover them.",
  // R-RR-6, R-UI-2: the legacy repair hold; the task's user certifies nothing, an operator repairs.
  [LEGACY_COPYBACK_REPAIR_CAUSE]: "Copying this task's files back to the workspace failed. They are kept in the run's sandbox; an operator needs to recover them.",
  // R-UA-3, R-UI-2: the limit hold; the task's user gets no form and no identifiers, an operator acts.
  [EXPORT_LIMIT_CAUSE]: "This task's work is too large (or has clashing file names) to be saved back automatically. It is kept as it is; an operator needs to help before it continues.",
  // R-EX-4, R-UI-2: a copyback that failed for good (a conflict with host changes, a task that moved
  // on, a failed write); the files wait in the kept sandbox and an operator recovers them.
  [COPYBACK_FAILED_CAUSE]: "Saving this task's work back to the workspace failed. The work and its result are kept in the run's sandbox; an operator needs to recover them.",
  // R-PV-1: quiet: the agent never started, nothing was lost; an operator checks the provider and
  // asks for the check again. No ids, codes or provider details here (Recovery details has them).
  [PACK_VERIFICATION_UNAVAILABLE_CAUSE]: "This task's run is waiting to start: its sandbox could not confirm the agent's software. Nothing was lost; an operator needs to check the environment before it continues.",
};
const DEFAULT_ATTENTION = "This task's recovery needs an operator's attention. Its saved work is kept.";
// After a Discard the notice must not say the files are kept: they were given up.
export const FILES_GIVEN_UP_MESSAGE =
  "The sandbox that held this task's unsaved work was discarded, so that work is gone. An operator needs to record how the task goes on before it continues.";

// R-RC-5: a refused delivery in plain words, no ids or codes: what happened and what a person
// must do. Keyed by core's refusal codes (reconstruction/contract.ts RECONSTRUCTION_REFUSALS).
const DECIDE_AGAIN = "An operator needs to decide again how the task continues.";
const CHANGED_SOURCES = `What the task was to continue from changed after the decision. ${DECIDE_AGAIN}`;
const LATER_RUN = "A later run of this task has to be settled first; then an operator needs to decide again how the task continues.";
const REFUSAL_REASONS: Readonly<Record<string, string>> = {
  human_block: "A person blocked or reassigned the task after the decision, so it was left as they set it. When it may go on, an operator needs to decide again how it continues.",
  task_reassigned: `The task was given to another agent after the decision. ${DECIDE_AGAIN}`,
  task_closed: "The task was closed after the decision. Reopen it first if it should still continue.",
  attachment_changed: "A saved attachment it was to start from changed. An operator needs to choose the saved sources again.",
  attachment_unavailable: "A saved attachment it was to start from can no longer be read. An operator needs to choose the saved sources again.",
  foreign_attachment: "A saved attachment it was to start from no longer belongs to this task. An operator needs to choose the saved sources again.",
  sources_changed: CHANGED_SOURCES,
  result_unbound: CHANGED_SOURCES,
  descriptor_mismatch: CHANGED_SOURCES,
  source_not_destroyed: CHANGED_SOURCES,
  action_mismatch: CHANGED_SOURCES,
  run_not_found: CHANGED_SOURCES,
  lease_not_found: CHANGED_SOURCES,
  newer_execution: LATER_RUN,
  later_cancellation_unrepaired: LATER_RUN,
  external_action_uncertain: LATER_RUN,
  retry_budget_exhausted: `The fresh session's retries are used up. ${DECIDE_AGAIN}`,
  uncertain_predecessor: "A try of the fresh session ended without a clear outcome. An operator needs to inspect the run, then decide again how the task continues.",
};
export const RECONSTRUCTION_STOPPED_PREFIX = "Continuing this task from saved sources stopped.";
const DEFAULT_REFUSAL_REASON = DECIDE_AGAIN;

// R-RC-3, R-RC-5: what a pending delivery waits for, by the transient refusal's code
// (decide-reconstruction.ts TRANSIENT_DELIVERY_REFUSALS, and the wake's own refusals). One calm
// sentence each, no ids or codes; only recovery_hold_open needs a person, and says so. The
// delivery sweep stores the same sentence on the intent (deferral_message) for the CLI and REST.
const DEFERRAL_REASONS: Readonly<Record<string, string>> = {
  recovery_hold_open: "Waiting: another recovery action on this task must be settled first.",
  competing_recovery: "Waiting for another recovery of this task to finish or be settled first.",
  issue_run_active: "Waiting for the task's current run to end.",
  execution_owner: "Waiting for another run of this task to let go of it.",
  active_copyback_owner: "Waiting for the earlier run's files to finish being saved back.",
};
const DEFAULT_DEFERRAL_REASON = "Waiting for the task to be free to continue; it starts on its own once it is.";

/** R-RC-3: the sentence a deferred delivery's code reads as (a fixed text for any code). */
export function deferralMessage(code: string): string {
  return DEFERRAL_REASONS[code] ?? DEFAULT_DEFERRAL_REASON;
}

export function reconstructionStoppedMessage(refusalCode: string | null): string {
  return `${RECONSTRUCTION_STOPPED_PREFIX} ${(refusalCode ? REFUSAL_REASONS[refusalCode] : undefined) ?? DEFAULT_REFUSAL_REASON}`;
}

/** R-RC-3: the hold's "Continue from saved sources" decision is recorded and waits for delivery. */
function continuing(a: NoticeAction): boolean {
  return a.reconstruction?.status === "pending";
}

function attentionMessage(a: NoticeAction): string {
  // R-RC-5: the hold is open again after its reconstruction was refused: that is what to act on.
  if (a.reconstruction?.status === "cancelled") return reconstructionStoppedMessage(a.reconstruction.refusalCode);
  return a.filesGivenUp ? FILES_GIVEN_UP_MESSAGE : (ATTENTION_MESSAGES[a.cause] ?? DEFAULT_ATTENTION);
}

export function deriveTaskNotice(actions: readonly NoticeAction[]): TaskNotice {
  const open = actions
    .filter((a) => isOpenRecoveryActionStatus(a.status))
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  // Anything still waiting for a person wins over a queued restore: it is what needs doing.
  const waiting = open.find((a) => !a.recoveryQueued && !continuing(a));
  if (waiting) return { kind: "attention", runId: waiting.runId, actionId: waiting.id, cause: waiting.cause, message: attentionMessage(waiting) };
  const queued = open.find((a) => a.recoveryQueued || continuing(a));
  if (!queued) return { kind: "none" };
  if (!continuing(queued)) return { kind: "restoring", runId: queued.runId, message: RESTORING_MESSAGE };
  const deferral = queued.reconstruction?.deferral;
  return deferral
    ? { kind: "restoring", runId: queued.runId, message: CONTINUING_MESSAGE, waiting: deferralMessage(deferral.code) }
    : { kind: "restoring", runId: queued.runId, message: CONTINUING_MESSAGE };
}
