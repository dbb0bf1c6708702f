// Whether the "Wake agent" button may be pressed, and why not. Pure (the button shows the reason
// next to it); the server decides again when it is pressed (wakeAgent refuses a closed task and a
// task with an open recovery hold, and returns the run already queued or running instead of
// starting a second one).
import type { IssueStatusValue } from "~/server/routers/issues/issue-status";
import type { RunStatusValue } from "~/components/ui/run-status-badge";

export interface WakeSnapshot {
  issueStatus: IssueStatusValue;
  /** The task's assignee, or the agent chosen in the panel; null when none. */
  agentId: string | null;
  /** The task's latest run, if any. */
  latestRunStatus: RunStatusValue | null;
  /** The kind of the task's recovery notice (core's deriveTaskNotice); absent: none. */
  recovery?: "none" | "attention" | "restoring";
}

export type WakeDecision = { kind: "allowed" } | { kind: "disabled"; reason: string };

/**
 * R-ORP-3, R-RR-7: while a recovery hold is open the server refuses a wake (recovery_hold_open)
 * before anything else, so the button says that, not "already working": the held run still
 * reads as running, but it is waiting for its recovery, not working.
 */
export const WAKE_REFUSED_BY_HOLD: Readonly<Record<"attention" | "restoring", string>> = {
  attention:
    "This task's saved work is waiting for recovery (see the notice above); the agent cannot be woken until it is resolved.",
  restoring: "This task's saved work is being restored; the agent can be woken once that is done.",
};

export function decideWake(snapshot: WakeSnapshot): WakeDecision {
  if (snapshot.recovery === "attention" || snapshot.recovery === "restoring")
    return { kind: "disabled", reason: WAKE_REFUSED_BY_HOLD[snapshot.recovery] };
  if (snapshot.issueStatus === "done")
    return { kind: "disabled", reason: "This task is done. Move it back to an open status to wake an agent." };
  if (snapshot.issueStatus === "cancelled")
    return { kind: "disabled", reason: "This task is cancelled. Move it back to an open status to wake an agent." };
  if (snapshot.latestRunStatus === "queued")
    return { kind: "disabled", reason: "A run is already queued for this task." };
  if (snapshot.latestRunStatus === "running")
    return { kind: "disabled", reason: "The agent is already working on this task." };
  if (!snapshot.agentId) return { kind: "disabled", reason: "Assign an agent first." };
  return { kind: "allowed" };
}
