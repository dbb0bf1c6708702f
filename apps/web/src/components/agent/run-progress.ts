// The agent panel's chip: a run's status in the words a board member uses ("Working", not
// "running"). Client-safe: no server imports.
import type { RunStatusValue } from "~/components/ui/run-status-badge";

export interface RunProgress {
  label: string;
  /** Tailwind classes of the chip. */
  tone: string;
  /** False while the run may still change by itself (queued or working). */
  settled: boolean;
}

export const RUN_PROGRESS: Readonly<Record<RunStatusValue, RunProgress>> = {
  queued: { label: "Queued", tone: "bg-slate-100 text-slate-700 ring-slate-200", settled: false },
  running: { label: "Working", tone: "bg-sky-50 text-sky-800 ring-sky-200", settled: false },
  succeeded: { label: "Finished", tone: "bg-emerald-50 text-emerald-800 ring-emerald-200", settled: true },
  failed: { label: "Failed", tone: "bg-red-50 text-red-800 ring-red-200", settled: true },
  cancelled: { label: "Cancelled", tone: "bg-slate-50 text-slate-500 ring-slate-200", settled: true },
  timed_out: { label: "Timed out", tone: "bg-amber-50 text-amber-800 ring-amber-200", settled: true },
};

/**
 * The chip of a run held for recovery (R-UI-2): a running run whose copyback waits for an
 * operator is not "Working"; once the restore is queued it says so, as the task's notice does.
 */
export function runProgressOf(status: RunStatusValue, recovery: "none" | "attention" | "restoring"): RunProgress {
  if (status === "running" && recovery === "attention") {
    return { label: "Waiting for an operator", tone: "bg-amber-50 text-amber-800 ring-amber-200", settled: true };
  }
  if (status === "running" && recovery === "restoring") {
    return { label: "Restoring saved work", tone: "bg-indigo-50 text-indigo-800 ring-indigo-200", settled: false };
  }
  return RUN_PROGRESS[status];
}
