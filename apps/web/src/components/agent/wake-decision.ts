// Whether the "Wake agent" button may be pressed, and why not. Pure (the button shows the reason
// next to it); the server decides again when it is pressed (wakeAgent refuses a closed task, and
// returns the run already queued or running instead of starting a second one).
import type { IssueStatusValue } from "~/server/routers/issues/issue-status";
import type { RunStatusValue } from "~/components/ui/run-status-badge";

export interface WakeSnapshot {
  issueStatus: IssueStatusValue;
  /** The task's assignee, or the agent chosen in the panel; null when none. */
  agentId: string | null;
  /** The task's latest run, if any. */
  latestRunStatus: RunStatusValue | null;
}

export type WakeDecision = { kind: "allowed" } | { kind: "disabled"; reason: string };

export function decideWake(snapshot: WakeSnapshot): WakeDecision {
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
