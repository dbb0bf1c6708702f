// The nemesis's `kill_host` (two-host mode): SIGKILL of one whole host at once, every worker of it
// and every process under them (agents, bwrap), as a machine that loses power; the restarter leaves
// its workers down until the host returns, after a seeded delay (or at once in the quiet period).
// At most one host is down at a time, so the other keeps working and the checker can see that it
// leaves the dead host's runs alone (checker/hosts.ts). The fault is ok once every signal was
// sent (the checker closes the killed workers' lock sections there), fail when it found no live worker.
import { errorFields } from "../perform";
import { descendants } from "../procs";
import type { Harness } from "../loops/harness";
import type { Rng } from "../rng";

/** How long a killed host stays down (ms): long enough for its queued runs to be visibly waiting, and for the other host's sweeps to pass over its work many times. */
export const HOST_DOWN_MS: [number, number] = [5_000, 20_000];

export function killHost(h: Harness, rng: Rng): void {
  if (h.hosts.length < 2 || h.deadHosts.size > 0) return;
  const host = h.hosts[rng.int(h.hosts.length)]!;
  const victims = h.workers.live().filter((w) => w.host === host.index);
  const downMs = Math.round(rng.between(...HOST_DOWN_MS));
  if (victims.length === 0) return;
  const below = victims.flatMap((w) => (w.lastDescendants = descendants(w.pid)));
  h.deadHosts.add(host.index);
  for (const w of victims) h.kills.killed.add(w);
  const op = h.history.invoke("fault", { kind: "kill_host", host: host.id, pids: victims.map((w) => w.pid), descendants: below.map((d) => d.pid), downMs, wall: new Date().toISOString() });
  let signalled = 0;
  // The workers first (nothing more is claimed or written), then what they left.
  for (const ref of [...victims.map((w) => ({ pid: w.pid })), ...below]) {
    try {
      process.kill(ref.pid, "SIGKILL");
      signalled += 1;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ESRCH") h.history.append("nemesis.error", { kind: "kill_host", pid: ref.pid, message: errorFields(error).message });
    }
    // A paused process is killed too; its timer's SIGCONT then finds nothing.
    h.paused.delete(ref.pid);
  }
  if (signalled === 0) {
    h.deadHosts.delete(host.index);
    op.fail({ reason: "no process to signal" });
    return;
  }
  op.ok({ signalled });
  const timer = setTimeout(() => returnHost(h, host.index, "timer"), downMs);
  h.hostReturns.set(host.index, timer);
}

/** The host comes back: its workers are restarted by the restarter from now on (a host.return operation). */
export function returnHost(h: Harness, index: number, by: "timer" | "quiet"): void {
  if (!h.deadHosts.has(index)) return;
  clearTimeout(h.hostReturns.get(index));
  h.hostReturns.delete(index);
  const op = h.history.invoke("host.return", { host: h.hosts[index]!.id, by, wall: new Date().toISOString() });
  h.deadHosts.delete(index);
  op.ok();
}
