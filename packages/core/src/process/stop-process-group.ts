// Stopping a recorded agent process group that outlived its controller (R-FO-1, R-OWN-12): the
// worker that started it was killed, and a plain process group (no bubblewrap, whose
// --die-with-parent would have taken it along) keeps writing into the sandbox. The group is the
// one the provider started with the agent as its leader (pgid = the leader's PID).
//
// A PID alone is never trusted: the group is signalled only while its leader is alive with the
// recorded start time (and boot, and host), re-checked right before every signal. Once the leader
// is gone, the group id is still safe to signal while members remain, because Linux never hands
// out a number in use as a process group id; a leader PID in use by another process (pid_reused)
// or another boot means the group is gone and nothing is signalled. SIGTERM first, SIGKILL after
// a grace period, then gone is verified in /proc: no leader, no member of the group (zombies
// count as gone).
import { readdir } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import type { ProcessIdentity } from "./process-identity";
import { probeProcess, readProcStat } from "./read-process-identity";

export const GROUP_STOP_GRACE_MS = 2_000;
const POLL_MS = 25;

export type GroupStopOutcome =
  /** The leader was not alive with its recorded identity: nothing was signalled. */
  | { kind: "not_running"; reason: "no_such_pid" | "pid_reused" | "rebooted" | "zombie" }
  /** Signalled and verified gone in /proc. */
  | { kind: "stopped"; signal: "SIGTERM" | "SIGKILL" }
  /** Still there after SIGKILL and its grace (uninterruptible sleep, or /proc says otherwise). */
  | { kind: "survived"; members: number }
  /** Cannot be judged from here: another host, or /proc unreadable. Nothing was signalled. */
  | { kind: "unknown"; reason: "other_host" | "unreadable" };

/** PIDs of the live (non-zombie) members of process group `pgid`. */
export async function processGroupMembers(pgid: number): Promise<number[]> {
  const members: number[] = [];
  for (const name of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readProcStat(Number(name));
    if (typeof stat !== "string" && stat.processGroup === pgid && stat.state !== "Z" && stat.state !== "X") members.push(Number(name));
  }
  return members;
}

/** Whether the group may still be signalled: its leader alive as recorded, or gone without its number being reused. */
async function signallable(leader: ProcessIdentity): Promise<boolean> {
  const liveness = await probeProcess(leader);
  if (liveness.kind === "alive") return true;
  if (liveness.kind === "dead" && (liveness.reason === "no_such_pid" || liveness.reason === "zombie")) return (await processGroupMembers(leader.pid)).length > 0;
  return false;
}

async function gone(leader: ProcessIdentity): Promise<boolean> {
  const liveness = await probeProcess(leader);
  if (liveness.kind === "alive" || liveness.kind === "unknown") return false;
  if (liveness.reason === "pid_reused" || liveness.reason === "rebooted") return true;
  return (await processGroupMembers(leader.pid)).length === 0;
}

async function waitGone(leader: ProcessIdentity, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await gone(leader)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}

function send(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: gone already; EPERM: not ours. The /proc check decides either way.
  }
}

export async function stopRecordedProcessGroup(leader: ProcessIdentity, opts: { graceMs?: number } = {}): Promise<GroupStopOutcome> {
  const graceMs = opts.graceMs ?? GROUP_STOP_GRACE_MS;
  const first = await probeProcess(leader);
  if (first.kind === "unknown") return first;
  if (first.kind === "dead") return { kind: "not_running", reason: first.reason };
  for (const signal of ["SIGTERM", "SIGKILL"] as const) {
    // Re-checked right before the signal: a leader that exited and whose PID was handed out again
    // in between is never signalled.
    if (!(await signallable(leader))) return { kind: "stopped", signal };
    send(leader.pid, signal);
    if (await waitGone(leader, graceMs)) return { kind: "stopped", signal };
  }
  const liveness = await probeProcess(leader);
  if (liveness.kind === "dead" && (liveness.reason === "pid_reused" || liveness.reason === "rebooted")) return { kind: "stopped", signal: "SIGKILL" };
  return { kind: "survived", members: (await processGroupMembers(leader.pid)).length };
}
