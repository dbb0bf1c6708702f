// Stopping what an exec started, from this controller or a later one (R-OWN-12). A recorded
// process group is signalled only while its leader is not known to be another process: a PID
// that is in use with another start time (or a boot that ended) means the group is gone, because
// Linux never hands out a number still in use as a process group id. Members are found in /proc
// by group id, so tar and git children of the agent are included; zombies count as dead.
import { setTimeout as sleep } from "node:timers/promises";
import { probeProcess } from "../../process/read-process-identity";
import { processGroupMembers } from "../../process/stop-process-group";
import type { ProcessIdentity, ProcessLiveness } from "../../process/process-identity";
import type { ProcessRecord } from "./sandbox-records";

/** How long SIGTERM gets before SIGKILL. */
export const KILL_GRACE_MS = 2_000;
const POLL_MS = 25;

export type GroupState = "alive" | "dead" | "unknown";

const leaderGone = (l: ProcessLiveness) => l.kind === "dead" && (l.reason === "pid_reused" || l.reason === "rebooted");

function send(target: number, signal: NodeJS.Signals): void {
  try {
    process.kill(target, signal);
  } catch {
    // ESRCH: already gone; EPERM: not ours to signal. Either way the probe decides.
  }
}

const isAlive = async (identity: ProcessIdentity | null) => identity !== null && (await probeProcess(identity)).kind === "alive";

/** Whether anything of one recorded exec may still run. */
export async function recordState(record: ProcessRecord): Promise<GroupState> {
  const leader = await probeProcess(record.leader);
  if (leader.kind === "unknown") return "unknown";
  if (record.namespaceInit) {
    const init = await probeProcess(record.namespaceInit);
    if (init.kind === "unknown") return "unknown";
    if (init.kind === "alive") return "alive";
  }
  if (leader.kind === "alive") return "alive";
  if (leaderGone(leader)) return "dead";
  return (await processGroupMembers(record.pgid)).length > 0 ? "alive" : "dead";
}

/**
 * SIGTERM goes to what runs the agent's command (under bubblewrap the sandbox's own session, so
 * bwrap outside stays to reap it); SIGKILL to everything: the group and the namespace init, whose
 * death takes every process of the sandbox's PID namespace with it.
 */
export async function signalRecord(record: ProcessRecord, signal: "SIGTERM" | "SIGKILL"): Promise<void> {
  const leader = await probeProcess(record.leader);
  if (leader.kind === "unknown") return;
  const initAlive = await isAlive(record.namespaceInit);
  if (initAlive && record.namespaceInit) {
    send(-record.namespaceInit.pid, signal);
    if (signal === "SIGKILL") send(record.namespaceInit.pid, "SIGKILL");
    if (signal === "SIGTERM") return;
  }
  if (!leaderGone(leader)) send(-record.pgid, signal);
}

async function allSettled(records: readonly ProcessRecord[]): Promise<GroupState[]> {
  return Promise.all(records.map((r) => recordState(r)));
}

async function waitUntilDead(records: readonly ProcessRecord[], ms: number): Promise<GroupState[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const states = await allSettled(records);
    if (!states.includes("alive") || Date.now() >= deadline) return states;
    await sleep(POLL_MS);
  }
}

/** SIGTERM, a grace period, SIGKILL; then what is known about each record. */
export async function terminateRecords(records: readonly ProcessRecord[], graceMs = KILL_GRACE_MS): Promise<GroupState[]> {
  if (records.length === 0) return [];
  for (const record of records) await signalRecord(record, "SIGTERM");
  let states = await waitUntilDead(records, graceMs);
  if (!states.includes("alive")) return states;
  for (const record of records) await signalRecord(record, "SIGKILL");
  states = await waitUntilDead(records, graceMs);
  return states;
}

/** Kills at once what is left of a finished exec (background children of the agent). */
export async function killLeftovers(record: ProcessRecord, graceMs = KILL_GRACE_MS): Promise<GroupState> {
  if ((await recordState(record)) !== "alive") return "dead";
  await signalRecord(record, "SIGKILL");
  return (await waitUntilDead([record], graceMs))[0] as GroupState;
}
