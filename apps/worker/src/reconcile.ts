// The worker's reconciler (DESIGN.md section 8): the finalization sweep (the same finalizeRun as
// the live path), the orphan sweep (restraint first: R-ORP-1), the maintenance of
// unverified-owner holds, the lease cleanup sweep (the same stop and destroy as a live
// release), the release of leases a dead controller left under settled runs, the retention of stopped runs'
// sandboxes (R-RC-7) and the replay of
// historical unsafe exports (R-UA-5) the delivery of reconstruction intents (R-RC-5) and the removal of
// settled runs' leftover staging, run one pass at a time at start and every RECONCILE_INTERVAL_MS.
import {
  Reconciler,
  finalizationSweep,
  harnessTakeoverSweep,
  historicalUnsafeSweep,
  hostBoundSweep,
  leaseCleanupSweep,
  leftoverStagingSweep,
  orphanSweep,
  ownerHoldsSweep,
  reconstructionDeliverySweep,
  settledRunLeasesSweep,
  stopRetentionSweep,
  type HostBinding,
  type Sweep,
  type SweepLog,
  type TenantHarnessConfig,
} from "@copyback/core/recovery";
import type { WorkerRuntime } from "./runtime";

export function createWorkerReconciler(
  runtime: WorkerRuntime,
  log: SweepLog,
  opts: { batchSize?: number; executesHere?: (runId: string) => boolean; harness?: TenantHarnessConfig } = {},
): Reconciler {
  const { batchSize, executesHere, harness } = opts;
  return new Reconciler({
    sweeps: [
      // R-RW-2, R-RW-3: with a harness configured, an unverified owner on Railway whose deployment
      // is proven removed is released first, so the finalization sweep below resumes it this pass.
      ...(harness ? [harnessTakeoverSweep({ db: runtime.db, harness, log })] : []),
      traced(runtime, bound(runtime, finalizationSweep({ ...runtime, log, executesHere }), byRun)),
      bound(runtime, orphanSweep({ db: runtime.db, controller: runtime.controller, log, executesHere }), byRun),
      ownerHoldsSweep({ db: runtime.db }),
      // R-RC-7: older acknowledged cancellations that missed the pin; before the lease cleanup,
      // which then stops what it pinned in the same pass.
      stopRetentionSweep({ db: runtime.db, log }),
      bound(runtime, leaseCleanupSweep({ db: runtime.db, registry: runtime.registry, controller: runtime.controller, log }), byLease),
      bound(runtime, settledRunLeasesSweep({ db: runtime.db, registry: runtime.registry, log, controller: runtime.controller, executesHere }), byLease),
      // R-UA-5: accepted results an older controller failed as unsafe exports, replayed with the export omitted.
      bound(runtime, historicalUnsafeSweep({ ...runtime, log }), byRun),
      // R-RC-5: pending "Continue from saved sources" intents delivered as fresh runs (rechecked at claim and handoff).
      reconstructionDeliverySweep({ db: runtime.db, instanceRoot: runtime.instanceRoot, log }),
      // The staging directories of settled runs that a killed controller could not remove.
      leftoverStagingSweep({ db: runtime.db, instanceRoot: runtime.instanceRoot, log }),
    ],
    ...(batchSize ? { batchSize } : {}),
    log,
  });
}

// Issue 23: sweeps that write a host workspace, probe or signal a controller's processes, or stop
// and destroy a sandbox act only on this host's host-local work (host-bound-sweep.ts).
const byRun = (unit: { runId: string }): HostBinding => ({ runId: unit.runId });
const byLease = (unit: { leaseId: string }): HostBinding => ({ leaseId: unit.leaseId });
function bound<U>(runtime: WorkerRuntime, sweep: Sweep<U>, bindingOf: (unit: U) => HostBinding): Sweep<U> {
  const narrowed = hostBoundSweep(sweep, { db: runtime.db, hostId: runtime.hostId, bindingOf });
  const trace = runtime.mergeTrace;
  if (!trace) return narrowed;
  // The torture suite's trace: each unit this host's sweep handles, by what binds it to a host.
  return { ...narrowed, handle: (unit) => (trace.note("sweep.handle", { sweep: sweep.name, ...bindingOf(unit) }), narrowed.handle(unit)) };
}

/** With the torture suite's merge trace on, the sweep's lock sections name the run they finalize. */
function traced<U extends { runId: string }>(runtime: WorkerRuntime, sweep: Sweep<U>): Sweep<U> {
  const trace = runtime.mergeTrace;
  if (!trace) return sweep;
  return { ...sweep, name: sweep.name, due: (limit) => sweep.due(limit), idOf: (unit) => sweep.idOf(unit), handle: (unit) => trace.withRun(unit.runId, "reconcile", () => sweep.handle(unit)) };
}
