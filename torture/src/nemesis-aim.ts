// Where an aimed worker kill lands. The suite exists to judge copybacks under
// faults, yet a uniformly random kill mostly met workers that were booting or had agents mid-turn
// (seed 1, 3 minutes: 27 of 61 kills idle, 10 mid-turn), and every agent it killed mid-turn cost a
// run its accepted result (process_lost). An aimed kill waits, within a bounded window, for a worker
// that is copying or finalizing and kills that one. Spared: a run a kill already met (or the aimed
// kills chased one run's takeover copies: one run killed 8 times over in 3 minutes, its commit
// waiting), and a run whose export the clients armed to fail into the reconciler's retry (a kill
// mid-copy drops the fail count, which lives in the exporting process, so the takeover's export
// succeeds and the retry path, the held-lease rule's case, never comes: seed 3, 3 minutes, 2
// leases released unsettled instead of 10). Pure: the nemesis reads the activity and kills.
import type { Rng } from "./rng";
import type { WorkerActivity } from "./worker-activity";

/**
 * The worker to kill now, or null to wait: one copying a run first (the physical copyback, the
 * owner fence's case), else one admitting or arbitrating a finalization; among them the one with
 * the fewest agents mid-turn (those only lose their run), ties broken by the seeded draw. Runs
 * `spared` says are spared do not count.
 */
export function aimAt(activity: ReadonlyMap<number, WorkerActivity>, spared: (runId: string) => boolean, rng: Rng): number | null {
  for (const tier of ["copying", "finalizing"] as const) {
    const candidates = [...activity.entries()].filter(([, a]) => a[tier].some((runId) => !spared(runId)));
    if (candidates.length === 0) continue;
    const fewest = Math.min(...candidates.map(([, a]) => a.turn.length));
    return rng.pick(candidates.filter(([, a]) => a.turn.length === fewest).map(([pid]) => pid));
  }
  return null;
}

/**
 * The worker an aimed kill takes when its window passed without a copy or finalization (mostly on
 * a loaded machine, where workers spend much of their short lives booting): one with no agent
 * mid-turn (booting, idle, or only holding runs that wait for a retry), so a miss does not cost a
 * run its result, and of those the one started last (`startedAt`, larger is later): every kill
 * costs a reboot, and a worker still booting loses the least of one. While every worker has an
 * agent mid-turn it waits (null) until `lastChance`, then takes any. Null also without workers.
 */
export function missTarget(activity: ReadonlyMap<number, WorkerActivity>, startedAt: ReadonlyMap<number, number>, lastChance: boolean, rng: Rng): number | null {
  const pids = [...activity.keys()];
  if (pids.length === 0) return null;
  const free = pids.filter((pid) => activity.get(pid)!.turn.length === 0);
  if (free.length === 0) return lastChance ? rng.pick(pids) : null;
  const latest = Math.max(...free.map((pid) => startedAt.get(pid) ?? 0));
  return rng.pick(free.filter((pid) => (startedAt.get(pid) ?? 0) === latest));
}
