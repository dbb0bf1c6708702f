// The worker's reconciler (DESIGN.md section 8): the finalization sweep (the same finalizeRun as
// the live path), the orphan sweep (restraint first: R-ORP-1) and the maintenance of
// unverified-owner holds, run one pass at a time at start and every RECONCILE_INTERVAL_MS.
import { Reconciler, finalizationSweep, orphanSweep, ownerHoldsSweep, type SweepLog } from "@copyback/core/recovery/index";
import type { WorkerRuntime } from "./runtime";

export function createWorkerReconciler(runtime: WorkerRuntime, log: SweepLog, batchSize?: number): Reconciler {
  return new Reconciler({
    sweeps: [
      finalizationSweep({ ...runtime, log }),
      orphanSweep({ db: runtime.db, controller: runtime.controller, log }),
      ownerHoldsSweep({ db: runtime.db }),
    ],
    ...(batchSize ? { batchSize } : {}),
    log,
  });
}
