// R-OWN-12: whether a recorded process is still the same process. A PID alone proves nothing:
// the kernel hands numbers out again, so a live PID with another start time is another process,
// and a start time only means something within the boot (and on the host) that recorded it.
import type { ProcessIdentity, ProcessLiveness } from "./process-identity";
import type { ProcStat } from "./proc-stat";

/** What this host can see right now about the recorded PID. */
export interface ProcessObservation {
  host: string;
  /** null when the boot id cannot be read. */
  bootId: string | null;
  /** The PID's stat, "missing" when there is no such PID, "unreadable" on any other failure. */
  stat: ProcStat | "missing" | "unreadable";
}

/** Pure: recorded identity + observation -> liveness. */
export function decideLiveness(recorded: ProcessIdentity, seen: ProcessObservation): ProcessLiveness {
  if (recorded.host !== seen.host) return { kind: "unknown", reason: "other_host" };
  if (seen.bootId === null) return { kind: "unknown", reason: "unreadable" };
  // After a reboot every process of the old boot is gone, whatever PIDs exist now.
  if (recorded.bootId !== seen.bootId) return { kind: "dead", reason: "rebooted" };
  if (seen.stat === "missing") return { kind: "dead", reason: "no_such_pid" };
  if (seen.stat === "unreadable") return { kind: "unknown", reason: "unreadable" };
  if (seen.stat.startTime !== recorded.startTime) return { kind: "dead", reason: "pid_reused" };
  // A zombie has exited; only its parent has not collected the status yet.
  if (seen.stat.state === "Z" || seen.stat.state === "X") return { kind: "dead", reason: "zombie" };
  return { kind: "alive" };
}
