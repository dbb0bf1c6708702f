// A process as recorded in the database: PID alone is never trusted (R-OWN-12), so every
// record carries the start time the kernel reports for that PID (clock ticks since boot,
// /proc/<pid>/stat field 22), the boot id and the host. A PID whose start time differs is a
// different process that reused the number.
export interface ProcessIdentity {
  pid: number;
  /** /proc/<pid>/stat field 22, as a decimal string (ticks since boot; may exceed 2^53). */
  startTime: string;
  /** /proc/sys/kernel/random/boot_id: a start time only means something within one boot. */
  bootId: string;
  /** os.hostname(): a process on another host cannot be probed from here. */
  host: string;
}

/** What a liveness probe can honestly say about a recorded process. */
export type ProcessLiveness =
  | { kind: "alive" }
  | { kind: "dead"; reason: "no_such_pid" | "pid_reused" | "rebooted" | "zombie" }
  | { kind: "unknown"; reason: "other_host" | "unreadable" };
