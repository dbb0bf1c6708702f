// The worker kills: one SIGKILL recorded with what it hit, and the aimed kills beside the nemesis
// loop (nemesis-aim.ts decides where they land).
import type { PrismaClient } from "@copyback/db";
import { aimAt, missTarget } from "../nemesis-aim";
import { errorFields, signalAs } from "../perform";
import { descendants } from "../procs";
import { readActivity } from "../read-worker-activity";
import type { WorkerRecord } from "../system";
import { hitOf, type WorkerActivity } from "../worker-activity";
import { COMPANY_ID } from "../world";
import { sleep, type Harness } from "./harness";

/** How long a drawn aimed kill waits for a worker copying or finalizing. */
export const AIM_WINDOW_MS = 6_000;
// Past the window, a miss waits this much longer for a worker without an agent mid-turn.
const AIM_GRACE_MS = 4_000;

/**
 * SIGKILL of one worker as a kill_worker fault, recorded with what it hit (read just before: a
 * copy, a finalization, agents mid-turn, nothing). The fault is ok once the signal was sent (the
 * checker ends the worker's lock sections there), fail when the process was already gone.
 */
export async function killWorker(h: Harness, w: WorkerRecord, aim: "drawn" | "aimed" | "aim_missed", activity?: WorkerActivity | null): Promise<void> {
  const seen = activity !== undefined ? activity : ((await activityOf(h.prisma, [w.pid]))?.get(w.pid) ?? null);
  if (w.exited || h.kills.killed.has(w)) return;
  h.kills.killed.add(w);
  for (const runId of [...(seen?.copying ?? []), ...(seen?.finalizing ?? [])]) h.kills.hitRuns.add(runId);
  w.lastDescendants = descendants(w.pid);
  const op = h.history.invoke("fault", { kind: "kill_worker", pid: w.pid, worker: w.index, descendants: w.lastDescendants.length, aim, hit: seen ? hitOf(seen) : "unknown", ...(seen ?? {}) });
  signalAs(op, w.pid, "SIGKILL");
}

/**
 * The aimed kills, beside the nemesis loop: each drawn one waits in `pendingKills` (its deadline)
 * while this loop polls the workers' activity every 100 ms (one query for all of them); the oldest
 * is sent to a worker copying or finalizing a run as soon as there is one (aimAt); past its window
 * to a worker without an agent mid-turn, the one started last (missTarget); past the grace too, to
 * any. So every drawn kill is sent within 10 s and the rate stays the nemesis's. Kills still
 * pending when the chaos ends are not sent (none in the quiet period).
 */
export async function aimLoop(h: Harness): Promise<void> {
  const { workers, state, paused, kills } = h;
  const aimRng = h.draws.aim;
  while (state.chaos) {
    await sleep(100);
    const deadline = kills.pendingKills[0];
    if (deadline === undefined || state.pgDown) continue;
    try {
      const live = workers.live().filter((w) => !paused.has(w.pid) && !kills.killed.has(w));
      if (live.length === 0) continue;
      const activity = await activityOf(h.prisma, live.map((w) => w.pid));
      const target = activity ? aimAt(activity, (runId) => kills.hitRuns.has(runId) || kills.armedToRetry.has(runId), aimRng) : null;
      let w = target !== null ? live.find((l) => l.pid === target) : undefined;
      let aim: "aimed" | "aim_missed" = "aimed";
      if (!w && Date.now() >= deadline) {
        const lastChance = Date.now() >= deadline + AIM_GRACE_MS;
        const miss = activity ? missTarget(activity, new Map(live.map((l) => [l.pid, Number(l.start)])), lastChance, aimRng) : null;
        w = live.find((l) => l.pid === miss) ?? (lastChance ? aimRng.pick(live) : undefined);
        aim = "aim_missed";
      }
      if (!w) continue;
      kills.pendingKills.shift();
      await killWorker(h, w, aim, activity?.get(w.pid) ?? null);
    } catch (error) {
      h.history.append("nemesis.error", { kind: "kill_worker", message: errorFields(error).message });
    }
  }
}

/** The workers' activity (worker-activity.ts), or null when the database does not answer within a second (a restart, a load peak). */
async function activityOf(prisma: PrismaClient, pids: number[]): Promise<Map<number, WorkerActivity> | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), 1_000)));
  try {
    return await Promise.race([readActivity(prisma, COMPANY_ID, pids).catch(() => null), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
