// The nemesis: one seeded fault after another, each a `fault` operation (invoke, then ok once it
// took effect, fail when its target was gone, info when it is unknown: a restart or a termination
// that did not answer). Pauses and a full disk end on their own timers, as operations of their own.
import { closeSync, openSync, rmSync, statfsSync, writeSync } from "node:fs";
import path from "node:path";
import { completionOfError, errorFields, signalAs } from "../perform";
import { cmdline, descendants } from "../procs";
import type { WorkerRecord, Workers } from "../system";
import { DAYTONA_WEIGHTS, daytonaFault, isDaytonaKind } from "../daytona-mode/faults";
import { AIM_WINDOW_MS, killWorker } from "./aim";
import { sleep, type Harness } from "./harness";
import { killHost } from "../two-host/kill-host";

const DEFAULT_WEIGHTS = {
  kill_worker: 5,
  pause_worker: 3,
  kill_agent: 3,
  pause_agent: 2,
  terminate_lock_backend: 4,
  terminate_pool_backend: 3,
  pg_restart: 1,
  disk_full: 1,
  // Two-host mode only (nemesisWeights): last, so a one-host seed draws the sequence it always did.
  kill_host: 0,
};
/** kill_host's weight with two hosts or more: about one host killed a minute on a loaded machine (one host down at a time). */
const KILL_HOST_WEIGHT = 0.6;
// With `--provider daytona` a run makes dozens of API calls where a local one makes none, and the
// emulator's kinds share the draws: the same kinds at about half their weight (seed 2 at load 20
// with the local weights: a worker killed every 2-12 s, each restart taking longer than that to
// come up, 6 runs woken in 4 minutes).
const DAYTONA_MODE_LOCAL_WEIGHTS: typeof DEFAULT_WEIGHTS = {
  kill_worker: 3,
  pause_worker: 2,
  kill_agent: 2,
  pause_agent: 1,
  terminate_lock_backend: 2,
  terminate_pool_backend: 2,
  pg_restart: 1,
  disk_full: 1,
  kill_host: 0,
};
export type NemesisKind = keyof typeof DEFAULT_WEIGHTS | keyof typeof DAYTONA_WEIGHTS;

/**
 * The nemesis's weights, with the kinds `without` names left out (an unknown kind is refused).
 * The Daytona emulator's kinds come after the others, and only with `--provider daytona`: a local
 * seed's sequence of fault kinds is the one it always was.
 */
export function nemesisWeights(without: readonly string[], provider: "local" | "daytona" = "local", hosts = 1): Partial<Record<NemesisKind, number>> {
  const weights: Partial<Record<NemesisKind, number>> = provider === "daytona" ? { ...DAYTONA_MODE_LOCAL_WEIGHTS, ...DAYTONA_WEIGHTS } : { ...DEFAULT_WEIGHTS };
  // (A weight of 0 shifts no draw: kill_host's place among the kinds leaves a one-host seed's sequence as it was.)
  if (hosts > 1) weights.kill_host = KILL_HOST_WEIGHT;
  for (const kind of without) {
    if (!(kind in weights)) throw new Error(`--without: no nemesis kind ${kind} (${Object.keys(weights).join(", ")})`);
    weights[kind as NemesisKind] = 0;
  }
  return weights;
}

export async function nemesisLoop(h: Harness, weights: Partial<Record<NemesisKind, number>>): Promise<void> {
  const { db, workers, history, state, paused, kills } = h;
  const rng = h.draws.nemesis;
  await sleep(3_000);
  while (state.chaos) {
    // Daytona mode: one fault a second on average (a local run's 0.5 s starved the slower Daytona runs).
    await sleep(h.daytona ? rng.between(400, 1600) : rng.between(200, 800));
    if (!state.chaos) break;
    const kind = rng.weighted(weights as Record<NemesisKind, number>);
    try {
      if (isDaytonaKind(kind)) {
        if (h.daytona) daytonaFault(h.daytona, history, kind, rng);
      } else if (kind === "kill_worker" || kind === "pause_worker") {
        // A worker already killed is not killed or paused again before its exit is observed (a zombie's kill hit nothing).
        const live = workers.live().filter((w) => !paused.has(w.pid) && !kills.killed.has(w));
        if (live.length === 0) continue;
        const w = rng.pick(live);
        if (kind === "kill_worker") {
          // Most kills are aimed (nemesis-aim.ts): they wait, at most AIM_WINDOW_MS, for a worker
          // copying or finalizing a run, beside the loop (aim.ts), so the kill rate is unchanged;
          // the rest kill the drawn worker at once. The draw of `w` above is kept either way, so a
          // seed's sequence of fault kinds is the one it always was.
          if (h.draws.aim.next() < h.options.aimedKillShare) kills.pendingKills.push(Date.now() + AIM_WINDOW_MS);
          else await killWorker(h, w, "drawn");
        } else {
          const ms = Math.round(rng.between(3500, 7000));
          const op = history.invoke("fault", { kind, pid: w.pid, worker: w.index, ms });
          if (!signalAs(op, w.pid, "SIGSTOP")) continue;
          w.stopped = true;
          paused.add(w.pid);
          setTimeout(() => {
            if (resume(h, w.pid)) w.stopped = false;
          }, ms);
        }
      } else if (kind === "kill_agent" || kind === "pause_agent") {
        const agents = agentsOf(workers, h.daytona !== null).filter((a) => !paused.has(a.pid));
        if (agents.length === 0) continue;
        const a = rng.pick(agents);
        if (kind === "kill_agent") {
          signalAs(history.invoke("fault", { kind, pid: a.pid, worker: a.worker?.index ?? null }), a.pid, "SIGKILL");
        } else {
          const ms = Math.round(rng.between(1000, 4000));
          if (!signalAs(history.invoke("fault", { kind, pid: a.pid, ms }), a.pid, "SIGSTOP")) continue;
          paused.add(a.pid);
          setTimeout(() => resume(h, a.pid), ms);
        }
      } else if (kind === "terminate_lock_backend" || kind === "terminate_pool_backend") {
        const app = kind === "terminate_lock_backend" ? "copyback-finalization-owner" : "copyback-worker";
        const rows = await db.admin((c) => c.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2", [db.name, app]));
        if (rows.rows.length === 0) continue;
        const target = rng.pick(rows.rows);
        const op = history.invoke("fault", { kind, backend: target.pid, candidates: rows.rows.length });
        try {
          const answer = await db.admin((c) => c.query<{ terminated: boolean }>("SELECT pg_terminate_backend($1) AS terminated", [target.pid]));
          // False: no such backend any more (it ended meanwhile), nothing terminated.
          if (answer.rows[0]?.terminated === true) op.ok();
          else op.fail({ reason: "no such backend" });
        } catch (error) {
          op[completionOfError(error)](errorFields(error));
        }
      } else if (kind === "pg_restart") {
        if (!db.owned) continue;
        const op = history.invoke("fault", { kind });
        state.pgDown = true;
        try {
          await db.restart();
          op.ok();
        } catch (error) {
          // Down, back, or half-way: unknown.
          op[completionOfError(error)](errorFields(error));
        } finally {
          state.pgDown = false;
        }
      } else if (kind === "kill_host") {
        killHost(h, rng);
      } else if (kind === "disk_full") {
        // With two hosts, one host's root (drawn); else the one root, with no draw (a seed's sequence unchanged).
        const root = h.hosts.length > 1 ? rng.pick(h.hosts) : { home: h.home, diskMount: h.diskMount };
        if (!root.diskMount || state.disk) continue;
        const file = path.join(root.home, "ballast.bin");
        const free = Number(statfsSync(root.home).bavail) * Number(statfsSync(root.home).bsize);
        // Set before the fill, so the clients hold their wakes from its first byte.
        state.disk = file;
        const op = history.invoke("fault", { kind, bytes: free });
        try {
          const fd = openSync(file, "w");
          try {
            fallocateOrWrite(fd, Math.max(0, free - 4096));
          } finally {
            closeSync(fd);
          }
        } catch (error) {
          // Filled in part or not at all: the ballast goes, the clients wake again.
          rmSync(file, { force: true });
          state.disk = null;
          op[completionOfError(error)](errorFields(error));
          continue;
        }
        const ms = Math.round(rng.between(1500, 4000));
        op.ok({ ms });
        setTimeout(() => {
          const freed = history.invoke("nemesis.disk_free", { file });
          try {
            rmSync(file, { force: true });
            freed.ok();
          } catch (error) {
            freed[completionOfError(error)](errorFields(error));
          }
          state.disk = null;
        }, ms);
      }
    } catch (error) {
      history.append("nemesis.error", { kind, message: errorFields(error).message });
      state.pgDown = false;
    }
  }
}

/** SIGCONT of a paused process as a nemesis.resume operation, unless it was resumed already (the quiet period resumes every one). */
export function resume(h: Harness, pid: number, by: "timer" | "quiet" = "timer"): boolean {
  if (!h.paused.delete(pid)) return false;
  return signalAs(h.history.invoke("nemesis.resume", { pid, by }), pid, "SIGCONT");
}

/**
 * The agents running now: the workers' (local sandboxes), and with the Daytona emulator in this
 * process its sandboxes' agents too (its toolbox runs them as children of this process, under no
 * worker: `worker` is null).
 */
function agentsOf(workers: Workers, daytona: boolean): { pid: number; start: string; worker: WorkerRecord | null }[] {
  const isAgent = (pid: number) => cmdline(pid).includes("agent.mjs") && !cmdline(pid).startsWith("bwrap");
  const out: { pid: number; start: string; worker: WorkerRecord | null }[] = [];
  const workerPids = new Set<number>();
  for (const w of workers.live()) {
    for (const d of descendants(w.pid)) {
      workerPids.add(d.pid);
      if (isAgent(d.pid)) out.push({ ...d, worker: w });
    }
  }
  // The toolbox's `sh -c` wrappers name agent.mjs in their script text: only the agent's own process.
  const daytonaAgent = (pid: number) => isAgent(pid) && !cmdline(pid).startsWith("sh ");
  if (daytona) for (const d of descendants(process.pid)) if (!workerPids.has(d.pid) && daytonaAgent(d.pid)) out.push({ ...d, worker: null });
  return out;
}

/** Fills the filesystem: zeros in 8 MiB chunks until the bytes are written or ENOSPC. */
function fallocateOrWrite(fd: number, bytes: number): void {
  const chunk = Buffer.alloc(8 * 1024 * 1024);
  let left = bytes;
  while (left > 0) {
    try {
      left -= writeSync(fd, chunk.subarray(0, Math.min(chunk.length, left)));
    } catch {
      return;
    }
  }
}
