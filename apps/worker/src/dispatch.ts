// The worker's dispatch wiring: the provider registry (local and fake plugins), this instance's
// directory-merge locks, this process's identity as the runs' controller (R-OWN-12), and the
// Dispatcher that claims queued runs up to WORKER_CONCURRENCY and executes them in the background.
import { mkdir } from "node:fs/promises";
import type { PrismaClient } from "@copyback/db";
import { DirectoryMergeLocks } from "@copyback/core/copyback/locks/index";
import { Dispatcher, executeRun, type DispatchLog, type ExecuteRunDeps } from "@copyback/core/dispatch/index";
import { readProcessIdentity } from "@copyback/core/process/read-process-identity";
import { createDefaultRegistry } from "@copyback/core/providers/index";
import { claimQueuedRuns } from "@copyback/core/runs/index";

export interface WorkerDispatchOptions {
  prisma: PrismaClient;
  /** The same database, for finalization's dedicated ownership connection (R-OWN-6). */
  databaseUrl: string;
  instanceRoot: string;
  concurrency: number;
  apiUrl?: string;
  /** Export deadline of each copyback try (COPYBACK_EXPORT_TIMEOUT_MS). */
  exportTimeoutMs?: number;
  log: DispatchLog;
  /** Called when a run settles and frees a slot (the loop passes again without waiting). */
  onSlotFreed: () => void;
}

export async function createWorkerDispatch(opts: WorkerDispatchOptions): Promise<Dispatcher> {
  await mkdir(opts.instanceRoot, { recursive: true, mode: 0o700 });
  const controller = await readProcessIdentity(process.pid);
  // Without its own identity the worker could not record who drives a run; it must not claim any.
  if (!controller) throw new Error("cannot read this process's identity from /proc; refusing to dispatch runs");
  const deps: ExecuteRunDeps = {
    db: opts.prisma,
    registry: createDefaultRegistry({ instanceRoot: opts.instanceRoot }),
    instanceRoot: opts.instanceRoot,
    locks: new DirectoryMergeLocks({ instanceRoot: opts.instanceRoot }),
    databaseUrl: opts.databaseUrl,
    controller,
    apiUrl: opts.apiUrl,
    exportTimeoutMs: opts.exportTimeoutMs,
    log: opts.log,
  };
  return new Dispatcher({
    concurrency: opts.concurrency,
    claim: (limit) => claimQueuedRuns(opts.prisma, { limit, controller }),
    execute: (run, signal) => executeRun(deps, run, signal),
    log: opts.log,
    onSlotFreed: opts.onSlotFreed,
  });
}
