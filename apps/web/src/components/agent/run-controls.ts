// What the agent panel offers for the task's latest run (pure): Stop while it is queued or
// working (R-RC-7: run-only cancellation), Retry once it failed, timed out or was stopped
// (R-RR-7). Retry says why it cannot be pressed while a recovery action is open: the server
// refuses it then (recovery_hold_open) and the hold stays as it is.
import type { RunStatusValue } from "~/components/ui/run-status-badge";

export interface RunControlsSnapshot {
  runStatus: RunStatusValue;
  recovery: "none" | "attention" | "restoring";
  canWrite: boolean;
}

export interface RunControls {
  stop: boolean;
  retry: { kind: "hidden" } | { kind: "allowed" } | { kind: "disabled"; reason: string };
}

export const RETRY_REFUSED_BY_HOLD =
  "Retry waits for recovery: this task's saved work is held (see the notice above), and a new run cannot start until it is resolved.";

export function decideRunControls(snapshot: RunControlsSnapshot): RunControls {
  if (!snapshot.canWrite) return { stop: false, retry: { kind: "hidden" } };
  const { runStatus, recovery } = snapshot;
  // A running run held for its copyback is the recovery's, not the agent's: no Stop there.
  const stop = runStatus === "queued" || (runStatus === "running" && recovery === "none");
  if (runStatus !== "failed" && runStatus !== "timed_out" && runStatus !== "cancelled") return { stop, retry: { kind: "hidden" } };
  if (recovery !== "none") return { stop, retry: { kind: "disabled", reason: RETRY_REFUSED_BY_HOLD } };
  return { stop, retry: { kind: "allowed" } };
}
