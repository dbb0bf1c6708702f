// An interrupted run (Ctrl-C, SIGTERM, a closed terminal) takes its workers with it. They are
// started detached (sessions of their own, system.ts), so no terminal signal reaches them: before
// this, two workers of a run interrupted by SIGINT were still claiming runs 80 minutes later. On
// the first such signal every live worker is killed with SIGKILL (an interrupted run's verdict is
// void anyway, and a graceful stop could take a minute), then what they left (agents, bwrap) is
// reaped, exactly as the normal end reaps it; then the signal goes on to the other handlers (the
// network namespaces', the embedded server's own, packages/db exit-hooks.ts), as if this one
// were not there.
import type { ProcRef } from "./procs";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

export interface Interruptible {
  live(): { pid: number }[];
  reapLeftovers(): ProcRef[];
}

/** Installs the handlers; answers a function that removes them (the normal end stops the workers itself). */
export function killWorkersOnInterrupt(workers: Interruptible, say: (message: string) => void): () => void {
  const onSignal = (signal: (typeof SIGNALS)[number]) => {
    detach();
    const { killed, reaped } = killWorkersNow(workers);
    say(`${signal}: killed ${killed} worker(s) and ${reaped} process(es) they left`);
    process.kill(process.pid, signal);
  };
  const handlers = SIGNALS.map((signal) => [signal, () => onSignal(signal)] as const);
  function detach() {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  }
  for (const [signal, handler] of handlers) process.on(signal, handler);
  return detach;
}

/** SIGKILL of every live worker, then the reaping of what they left; answers the counts. */
export function killWorkersNow(workers: Interruptible): { killed: number; reaped: number } {
  const live = workers.live();
  for (const w of live) {
    try {
      process.kill(w.pid, "SIGKILL");
    } catch {
      // Gone meanwhile.
    }
  }
  return { killed: live.length, reaped: workers.reapLeftovers().length };
}
