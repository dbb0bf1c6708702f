// The run page's phase timeline: the run's status and its finalization coordinator's phase
// (mirrored on heartbeat_runs.native_phase) as the steps a board member recognizes. Pure.
import type { RunStatusValue } from "~/components/ui/run-status-badge";

export type StepState = "done" | "current" | "pending" | "failed";

export interface TimelineStep {
  key: "queued" | "working" | "result" | "copyback" | "committed" | "ended";
  label: string;
  state: StepState;
  at: Date | null;
  /** A short line under the label, when there is something to say. */
  note?: string;
}

export interface TimelineRun {
  status: RunStatusValue;
  /** The coordinator phase, e.g. "result_accepted"; null before one exists. */
  nativePhase: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

// The coordinator's happy path, in order (DESIGN.md section 3).
const PHASE_RANK: Readonly<Record<string, number>> = {
  observed: 0,
  result_accepted: 1,
  workspace_finalizing: 2,
  arbitrating: 3,
  committed: 4,
  // A copyback failure that will be retried comes after an accepted result.
  retryable_failure: 1,
};

const ENDED_LABEL: Partial<Record<RunStatusValue, string>> = {
  failed: "Failed",
  cancelled: "Cancelled",
  timed_out: "Timed out",
};

export function runTimeline(run: TimelineRun): TimelineStep[] {
  const rank = run.nativePhase !== null ? (PHASE_RANK[run.nativePhase] ?? -1) : -1;
  const ended = ENDED_LABEL[run.status];
  const retrying = run.nativePhase === "retryable_failure";
  const reached = {
    working: run.startedAt !== null || run.status === "running" || run.status === "succeeded",
    result: rank >= 1,
    copyback: rank >= 3,
    committed: rank >= 4 || run.status === "succeeded",
  };

  const steps: TimelineStep[] = [
    { key: "queued", label: "Queued", state: "done", at: run.createdAt },
    { key: "working", label: "Agent working", state: reached.working ? "done" : "pending", at: run.startedAt },
    { key: "result", label: "Result accepted", state: reached.result ? "done" : "pending", at: null },
    { key: "copyback", label: "Files copied back", state: reached.copyback ? "done" : "pending", at: null },
    {
      key: "committed",
      label: "Task updated",
      state: reached.committed ? "done" : "pending",
      at: reached.committed ? run.finishedAt : null,
    },
  ];

  // The first step not reached is where the run is now, or where it stopped.
  const next = steps.find((step) => step.state === "pending");
  if (ended) {
    if (next) next.state = "failed";
    steps.push({ key: "ended", label: ended, state: "failed", at: run.finishedAt });
  } else if (next && run.status !== "queued") {
    next.state = "current";
    if (retrying && next.key === "copyback") next.note = "Waiting to retry copying the files back.";
  }
  return steps;
}
