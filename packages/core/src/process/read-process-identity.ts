// Reads a process's identity from /proc and probes a recorded identity (R-OWN-12). Linux only:
// where /proc cannot be read, identities are null and probes answer "unknown", never "dead".
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";
import { errnoOf } from "../errors";
import { decideLiveness, type ProcessObservation } from "./liveness-policy";
import { parseProcStat, type ProcStat } from "./proc-stat";
import type { ProcessIdentity, ProcessLiveness } from "./process-identity";

export interface ProcOptions {
  /** Where procfs is mounted; tests point it elsewhere to simulate an unreadable /proc. */
  procRoot?: string;
}

const DEFAULT_PROC = "/proc";

export async function readBootId(opts: ProcOptions = {}): Promise<string | null> {
  try {
    const text = await readFile(join(opts.procRoot ?? DEFAULT_PROC, "sys/kernel/random/boot_id"), "utf8");
    const id = text.trim();
    return id === "" ? null : id;
  } catch {
    return null;
  }
}

export async function readProcStat(pid: number, opts: ProcOptions = {}): Promise<ProcStat | "missing" | "unreadable"> {
  if (!Number.isSafeInteger(pid) || pid <= 0) return "missing";
  try {
    const stat = parseProcStat(await readFile(join(opts.procRoot ?? DEFAULT_PROC, String(pid), "stat"), "utf8"));
    return stat ?? "unreadable";
  } catch (error) {
    // ESRCH: the process exited between open and read.
    const errno = errnoOf(error);
    return errno === "ENOENT" || errno === "ESRCH" ? "missing" : "unreadable";
  }
}

/** The identity of a running process, or null when it does not exist (or /proc is unreadable). */
export async function readProcessIdentity(pid: number, opts: ProcOptions = {}): Promise<ProcessIdentity | null> {
  const [stat, bootId] = await Promise.all([readProcStat(pid, opts), readBootId(opts)]);
  if (typeof stat === "string" || bootId === null) return null;
  return { pid, startTime: stat.startTime, bootId, host: hostname() };
}

/** R-OWN-12: alive only when this host, this boot and the recorded start time all match. */
export async function probeProcess(identity: ProcessIdentity, opts: ProcOptions = {}): Promise<ProcessLiveness> {
  const host = hostname();
  // Another host's PIDs mean nothing here: do not even look.
  if (identity.host !== host) return { kind: "unknown", reason: "other_host" };
  const [stat, bootId] = await Promise.all([readProcStat(identity.pid, opts), readBootId(opts)]);
  const seen: ProcessObservation = { host, bootId, stat };
  return decideLiveness(identity, seen);
}
