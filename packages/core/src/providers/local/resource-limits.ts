// Resource limits for local agents, per environment (`environments.config`
// of a local environment, `limits`), with documented defaults. How each is enforced depends on
// what this machine allows, decided per exec and recorded in the run log:
//   cpuSeconds  RLIMIT_CPU through util-linux `prlimit` (per process: SIGXCPU at the limit)
//   fileSizeMb  RLIMIT_FSIZE through `prlimit` (a write past it: SIGXFSZ)
//   memoryMb    a memory cgroup (v1 memory.limit_in_bytes / v2 memory.max) when one is writable,
//               the OOM kill counted; otherwise RLIMIT_AS (address space per process), which
//               makes allocations fail but cannot be told apart from other failures afterwards
//   processes   a pids cgroup (pids.max) when one is writable, hits counted; otherwise
//               RLIMIT_NPROC, which the kernel does not apply to root
// `null` turns one off. A run that hits a limit fails with `agent_resource_limit`.
import { z } from "zod";

export const RESOURCE_LIMIT_DEFAULTS = { cpuSeconds: 3600, memoryMb: 4096, processes: 512, fileSizeMb: 4096 } as const;

const limit = (max: number) => z.number().int().positive().max(max).nullable();

export const resourceLimits = z.strictObject({
  /** CPU time per process, seconds. */
  cpuSeconds: limit(7 * 24 * 3600).default(RESOURCE_LIMIT_DEFAULTS.cpuSeconds),
  /** Memory of the whole sandbox (cgroup) or address space per process (rlimit), MiB. */
  memoryMb: limit(1024 * 1024).default(RESOURCE_LIMIT_DEFAULTS.memoryMb),
  /** Processes (and threads) of the whole sandbox at once. */
  processes: limit(1_000_000).default(RESOURCE_LIMIT_DEFAULTS.processes),
  /** Largest file the agent may write, MiB. */
  fileSizeMb: limit(1024 * 1024).default(RESOURCE_LIMIT_DEFAULTS.fileSizeMb),
});
export type ResourceLimits = z.infer<typeof resourceLimits>;
export const DEFAULT_RESOURCE_LIMITS: ResourceLimits = resourceLimits.parse({});

export type LimitKind = "cpu" | "memory" | "processes" | "file_size";
export type Enforcement = "rlimit" | "cgroup" | "not_enforced" | "off";

export interface LimitPlan {
  /** prlimit's arguments (before `--`), empty when no rlimit is set. */
  prlimitArgs: string[];
  /** How each limit is enforced on this exec, for the run log and the run page. */
  enforcement: Record<LimitKind, Enforcement>;
}

const MIB = 1024 * 1024;

/**
 * Pure: which limit goes where, given whether `prlimit` exists and which cgroups are writable.
 * The CPU hard limit is a few seconds above the soft one, so the process gets SIGXCPU (a
 * recognisable death) rather than SIGKILL.
 */
export function planLimits(limits: ResourceLimits, can: { prlimit: boolean; memoryCgroup: boolean; pidsCgroup: boolean }): LimitPlan {
  const args: string[] = [];
  const rl = (flag: string, value: number): Enforcement => {
    if (!can.prlimit) return "not_enforced";
    args.push(`--${flag}=${value}`);
    return "rlimit";
  };
  const cpu: Enforcement = limits.cpuSeconds === null ? "off" : can.prlimit ? (args.push(`--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 5}`), "rlimit") : "not_enforced";
  const fileSize: Enforcement = limits.fileSizeMb === null ? "off" : rl("fsize", limits.fileSizeMb * MIB);
  const memory: Enforcement = limits.memoryMb === null ? "off" : can.memoryCgroup ? "cgroup" : rl("as", limits.memoryMb * MIB);
  // RLIMIT_NPROC counts every process of the user and never applies to root: set it only for
  // other users, and say it is not enforced for root.
  const processes: Enforcement =
    limits.processes === null ? "off" : can.pidsCgroup ? "cgroup" : process.getuid?.() === 0 ? "not_enforced" : rl("nproc", limits.processes);
  return { prlimitArgs: args, enforcement: { cpu, memory, processes, file_size: fileSize } };
}

/** SIGXCPU and SIGXFSZ, as a signal or as a shell's (or bubblewrap's) exit status 128 + n. */
const SIGNAL_LIMITS: ReadonlyArray<[NodeJS.Signals, number, LimitKind]> = [
  ["SIGXCPU", 128 + 24, "cpu"],
  ["SIGXFSZ", 128 + 25, "file_size"],
];

/** Pure: the limit an exit shows was hit (by the process's death), or null. */
export function limitFromExit(exit: { code: number | null; signal: string | null }, enforcement: Record<LimitKind, Enforcement>): LimitKind | null {
  for (const [signal, status, kind] of SIGNAL_LIMITS) {
    if (enforcement[kind] !== "rlimit") continue;
    if (exit.signal === signal || exit.code === status) return kind;
  }
  return null;
}

export function describeLimits(limits: ResourceLimits, enforcement: Record<LimitKind, Enforcement>): string {
  const how = (e: Enforcement) => (e === "off" ? "off" : e === "not_enforced" ? "NOT enforced here" : e);
  const show = (value: number | null, unit: string) => (value === null ? "unlimited" : `${value}${unit}`);
  return [
    `CPU ${show(limits.cpuSeconds, " s per process")} (${how(enforcement.cpu)})`,
    `memory ${show(limits.memoryMb, " MiB")} (${how(enforcement.memory)})`,
    `processes ${show(limits.processes, "")} (${how(enforcement.processes)})`,
    `file size ${show(limits.fileSizeMb, " MiB")} (${how(enforcement.file_size)})`,
  ].join(", ");
}

export const LIMIT_NAMES: Readonly<Record<LimitKind, string>> = { cpu: "CPU time", memory: "memory", processes: "process count", file_size: "file size" };
