// What the worker's dispatch and its reconciler share: one provider registry (local and fake
// plugins), this instance's directory-merge locks, this process's identity as the controller of
// the runs it drives (R-OWN-12), and the set of finalizations in flight (awaited at shutdown).
import { mkdir } from "node:fs/promises";
import type { PrismaClient } from "@copyback/db";
import { DirectoryMergeLocks } from "@copyback/core";
import { resolveHostId } from "@copyback/core/deployment";
import type { ExecuteRunDeps } from "@copyback/core/dispatch";
import type { ControllerPlatformIdentity } from "@copyback/core/platforms";
import { readProcessIdentity } from "@copyback/core/process";
import { createDefaultRegistry } from "@copyback/core/providers";
import { createMergeTrace, type MergeTrace } from "./merge-trace";

export interface WorkerRuntimeOptions {
  prisma: PrismaClient;
  /** The same database, for finalization's dedicated ownership connection (R-OWN-6). */
  databaseUrl: string;
  instanceRoot: string;
  /** COPYBACK_HOST_ID as configured; unset: the instance root's generated host id (issue 23). */
  hostId?: string;
  apiUrl?: string;
  /** Export deadline of each copyback try (COPYBACK_EXPORT_TIMEOUT_MS). */
  exportTimeoutMs?: number;
  log: ExecuteRunDeps["log"];
  /** COPYBACK_LOCAL_ISOLATION: the local provider's isolation (default "auto"). */
  localIsolation?: "auto" | "bubblewrap" | "none";
  /** COPYBACK_DAYTONA_LIFECYCLE_TIMEOUT_SEC: the Daytona plugin's wait for a lifecycle move (default 300 s). */
  daytonaLifecycleTimeoutSec?: number;
  /** COPYBACK_MERGE_TRACE_FILE: the torture suite's observation of host writes (merge-trace.ts). */
  mergeTraceFile?: string;
  /** R-RW-1: the platform deployment this worker runs in (env.ts controllerPlatformOf); absent off any platform. */
  platform?: ControllerPlatformIdentity;
}

// `platform` (ExecuteRunDeps) reaches every finalization of this worker: the dispatch's and the
// reconciler's sweeps take this object as their deps, so each new owner receipt names the deployment (R-RW-1).
// `hostId` (issue 23): the host this worker claims for; host-local work of other hosts is never touched.
export type WorkerRuntime = ExecuteRunDeps & { hostId: string; finalizations: Set<Promise<unknown>>; mergeTrace?: MergeTrace };

export async function createWorkerRuntime(opts: WorkerRuntimeOptions): Promise<WorkerRuntime> {
  await mkdir(opts.instanceRoot, { recursive: true, mode: 0o700 });
  const controller = await readProcessIdentity(process.pid);
  // Without its own identity the worker could not record who drives a run; it must not claim any.
  if (!controller) throw new Error("cannot read this process's identity from /proc; refusing to dispatch runs");
  const { hostId } = await resolveHostId({ instanceRoot: opts.instanceRoot, ...(opts.hostId !== undefined ? { configured: opts.hostId } : {}) });
  const mergeTrace = opts.mergeTraceFile ? createMergeTrace(opts.mergeTraceFile, opts.instanceRoot) : undefined;
  return {
    db: opts.prisma,
    registry: createDefaultRegistry({ instanceRoot: opts.instanceRoot, localIsolation: opts.localIsolation, daytonaLifecycleTimeoutSec: opts.daytonaLifecycleTimeoutSec }),
    instanceRoot: opts.instanceRoot,
    locks: mergeTrace?.locks ?? new DirectoryMergeLocks({ instanceRoot: opts.instanceRoot }),
    databaseUrl: opts.databaseUrl,
    controller,
    hostId,
    apiUrl: opts.apiUrl,
    exportTimeoutMs: opts.exportTimeoutMs,
    log: opts.log,
    finalizations: new Set(),
    ...(mergeTrace ? { mergeTrace } : {}),
    ...(opts.platform ? { platform: opts.platform } : {}),
  };
}
