// The restarter: killed workers come back (after a short pause while the nemesis is active, at
// once in the quiet period). Each start is a worker.restart operation: ok with its PID, or info
// when the start failed midway (a process may have been spawned).
import { perform } from "../perform";
import { sleep, type Harness } from "./harness";

export async function restartLoop(h: Harness): Promise<void> {
  const { workers, history, state } = h;
  const rng = h.draws.nemesis;
  const pending = new Map<number, number>();
  while (!state.stopping) {
    for (let i = 0; i < workers.all.reduce((m, w) => Math.max(m, w.index + 1), 0); i++) {
      if (workers.current.has(i)) continue;
      // A host killed whole stays down until it returns (two-host/kill-host.ts).
      if (h.deadHosts.has(workers.hostOf(i).index)) continue;
      const due = pending.get(i) ?? Date.now() + (state.chaos ? rng.between(300, 2500) : 0);
      pending.set(i, due);
      if (Date.now() >= due || !state.chaos) {
        pending.delete(i);
        if (state.stopping) break;
        await perform(history, "worker.restart", { worker: i }, () => workers.start(i), { answer: (w) => ({ pid: w.pid }) });
      }
    }
    await sleep(100);
  }
}
