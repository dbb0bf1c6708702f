// The processes the workers leave behind: an agent (with its bwrap) whose worker was killed, or
// stopped, is reparented and may keep running long after the harness ends, in a kept instance
// too. The harness started them, so it kills exactly the ones it saw, known by PID and /proc start
// time: a PID the kernel gave to another process since is never signalled.
import { alive, type ProcRef } from "./procs";

export type Signaller = (pid: number, signal: NodeJS.Signals) => void;

/** Sends SIGKILL to every still-living process of `seen`; answers the ones it was sent to. */
export function reapLeftovers(seen: Iterable<ProcRef>, signal: Signaller = (pid, s) => process.kill(pid, s)): ProcRef[] {
  const reaped: ProcRef[] = [];
  for (const ref of seen) {
    if (!alive(ref)) continue;
    try {
      signal(ref.pid, "SIGKILL");
      reaped.push(ref);
    } catch {
      // Gone between the look and the signal.
    }
  }
  return reaped;
}
