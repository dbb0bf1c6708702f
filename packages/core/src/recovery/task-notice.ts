// What the task view shows about recovery, derived in ONE place (DESIGN.md section 8; R-UI-1,
// R-UI-2, R-UI-5). Pure: open recovery actions and the task's runs in, one notice out.
//   - normal work (no notice) while a live run or an eligible bounded retry exists and nothing
//     is held;
//   - "Restoring saved work…" once the server confirmed recovery or an operator queued it (an
//     unverified-owner hold with a recorded attestation), until commitment resolves it;
//   - a compact operator-attention notice with "Inspect run" otherwise.
// The notice never carries a process id, host name, token, shutdown form or resume control;
// diagnostics live under "Recovery details" for the roles allowed to see them.
import { EXPORT_LIMIT_CAUSE, EXPORT_RETRY_EXHAUSTED_CAUSE, FILE_RECOVERY_CAUSE, LEGACY_COPYBACK_REPAIR_CAUSE, OWNER_UNVERIFIED_CAUSE } from "./causes";

export interface NoticeAction {
  id: string;
  cause: string;
  status: string;
  runId: string | null;
  /** The operator's attestation (or another confirmed recovery) is recorded: recovery is queued. */
  recoveryQueued: boolean;
  /** Issue 14: an operator discarded the sandbox this action needed (its files were given up). */
  filesGivenUp?: boolean;
  createdAt: Date;
}

export type TaskNotice =
  | { kind: "none" }
  | { kind: "restoring"; runId: string | null; message: string }
  | { kind: "attention"; runId: string | null; actionId: string; cause: string; message: string };

export const RESTORING_MESSAGE = "Restoring saved work…";

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
};
const DEFAULT_ATTENTION = "This task's recovery needs an operator's attention. Its saved work is kept.";
// Issue 14: after a Discard the notice must not say the files are kept: they were given up.
export const FILES_GIVEN_UP_MESSAGE =
  "The sandbox that held this task's unsaved work was discarded, so that work is gone. An operator needs to record how the task goes on before it continues.";

export function deriveTaskNotice(actions: readonly NoticeAction[]): TaskNotice {
  const open = actions
    .filter((a) => a.status === "active" || a.status === "escalated")
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id));
  // Anything still waiting for a person wins over a queued restore: it is what needs doing.
  const waiting = open.find((a) => !a.recoveryQueued);
  if (waiting) {
    const message = waiting.filesGivenUp ? FILES_GIVEN_UP_MESSAGE : (ATTENTION_MESSAGES[waiting.cause] ?? DEFAULT_ATTENTION);
    return { kind: "attention", runId: waiting.runId, actionId: waiting.id, cause: waiting.cause, message };
  }
  const queued = open.find((a) => a.recoveryQueued);
  if (queued) return { kind: "restoring", runId: queued.runId, message: RESTORING_MESSAGE };
  return { kind: "none" };
}
