// Whether a run's recorded controller still drives it, for the sweeps. A process knows exactly
// which runs it executes: when the recorded controller is THIS process (same PID, start time,
// boot id and host) and it does not execute the run any more, its executor gave up on it (a
// failure it could not even record, e.g. the database dropped the connection then), so the run
// is as orphaned as if its controller had died. Any other controller is probed (R-OWN-12).
import type { ProcessIdentity, ProcessLiveness } from "../../process/process-identity";
import { probeProcess } from "../../process/read-process-identity";

export interface ControllerView {
  self: ProcessIdentity;
  /** Whether this process's dispatcher executes the run right now. */
  executesHere?: (runId: string) => boolean;
}

export function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.pid === b.pid && a.startTime === b.startTime && a.bootId === b.bootId && a.host === b.host;
}

export async function controllerLiveness(view: ControllerView, runId: string, recorded: ProcessIdentity): Promise<ProcessLiveness> {
  if (view.executesHere && sameProcess(recorded, view.self)) {
    return view.executesHere(runId) ? { kind: "alive" } : { kind: "dead", reason: "no_such_pid" };
  }
  return probeProcess(recorded);
}
