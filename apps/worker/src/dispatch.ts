// The worker's dispatch wiring: the Dispatcher claims queued runs up to WORKER_CONCURRENCY for
// this controller and executes them in the background with the worker's shared runtime.
import { Dispatcher, executeRun, claimQueuedRuns } from "@copyback/core/dispatch";
import type { WorkerRuntime } from "./runtime";

export interface WorkerDispatchOptions {
  runtime: WorkerRuntime;
  concurrency: number;
  /** How long cancelled runs get to settle after the drain deadline. */
  abortGraceMs?: number;
  /** Called when a run settles and frees a slot (the loop passes again without waiting). */
  onSlotFreed: () => void;
}

export function createWorkerDispatch(opts: WorkerDispatchOptions): Dispatcher {
  const { runtime } = opts;
  const trace = runtime.mergeTrace;
  return new Dispatcher({
    concurrency: opts.concurrency,
    claim: async (limit) => {
      const claimed = await claimQueuedRuns(runtime.db, { limit, controller: runtime.controller, instanceRoot: runtime.instanceRoot, hostId: runtime.hostId });
      // The torture suite's trace: which process (so which host) claimed each run.
      if (trace) for (const run of claimed) trace.note("worker.claim", { runId: run.runId, hostId: runtime.hostId });
      return claimed;
    },
    execute: (run, signal) => (trace ? trace.withRun(run.runId, "dispatch", () => executeRun(runtime, run, signal)) : executeRun(runtime, run, signal)),
    log: runtime.log,
    onSlotFreed: opts.onSlotFreed,
    ...(opts.abortGraceMs !== undefined ? { abortGraceMs: opts.abortGraceMs } : {}),
  });
}
