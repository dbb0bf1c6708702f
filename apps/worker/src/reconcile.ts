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
  leaseCleanupSweep,
  leftoverStagingSweep,
  orphanSweep,
  ownerHoldsSweep,
  reconstructionDeliverySweep,
  settledRunLeasesSweep,
  stopRetentionSweep,
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
      // Issue 23: the sweeps that write a host workspace, probe or signal a controller's processes,
      // or stop and destroy a sandbox select only this host's host-local work, in their due SQL
      // (recovery/sweeps/host-bound-sweep.ts); `...runtime` carries runtime.hostId. The others take
      // no host on purpose, as none of them touches another host's files or processes: the harness
      // takeover and owner holds write records only (the harness is a remote platform's proof, the
      // very thing that lets another host take over: R-OWN-11); stop retention writes records and a
      // stop-only intent that the host-bound lease cleanup then carries out on the sandbox's own
      // host (run-stop.integration-test.ts, "R-RC-7 host affinity"); leftover staging reads only
      // this instance root's own staging/ directory, which no other host writes.
      traced(runtime, noted(runtime, finalizationSweep({ ...runtime, log, executesHere }), byRun)),
      noted(runtime, orphanSweep({ db: runtime.db, controller: runtime.controller, log, executesHere, hostId: runtime.hostId }), byRun),
      ownerHoldsSweep({ db: runtime.db }),
      // R-RC-7: older acknowledged cancellations that missed the pin; before the lease cleanup,
      // which then stops what it pinned in the same pass.
      stopRetentionSweep({ db: runtime.db, log }),
      noted(runtime, leaseCleanupSweep({ db: runtime.db, registry: runtime.registry, controller: runtime.controller, log, hostId: runtime.hostId }), byLease),
      noted(runtime, settledRunLeasesSweep({ db: runtime.db, registry: runtime.registry, log, controller: runtime.controller, executesHere, hostId: runtime.hostId }), byLease),
      // R-UA-5: accepted results an older controller failed as unsafe exports, replayed with the export omitted.
      noted(runtime, historicalUnsafeSweep({ ...runtime, log }), byRun),
      // R-RC-5: pending "Continue from saved sources" intents delivered as fresh runs (rechecked at claim and handoff).
      reconstructionDeliverySweep({ db: runtime.db, instanceRoot: runtime.instanceRoot, log, hostId: runtime.hostId }),
      // The staging directories of settled runs that a killed controller could not remove.
      leftoverStagingSweep({ db: runtime.db, instanceRoot: runtime.instanceRoot, log }),
    ],
    ...(batchSize ? { batchSize } : {}),
    log,
  });
}

/** What binds a sweep's unit to a host: its run's workspace, or its lease's sandbox. */
const byRun = (unit: { runId: string }) => ({ runId: unit.runId });
const byLease = (unit: { leaseId: string }) => ({ leaseId: unit.leaseId });

/**
 * With the torture suite's merge trace on, each unit a host-bound sweep handles is noted
 * (`sweep.handle`), so the two-host checker can judge which host swept what (torture/src/checker/hosts.ts).
 */
function noted<U>(runtime: WorkerRuntime, sweep: Sweep<U>, bindingOf: (unit: U) => Record<string, string>): Sweep<U> {
  const trace = runtime.mergeTrace;
  if (!trace) return sweep;
  return { ...sweep, handle: (unit) => (trace.note("sweep.handle", { sweep: sweep.name, ...bindingOf(unit) }), sweep.handle(unit)) };
}

/** With the torture suite's merge trace on, the sweep's lock sections name the run they finalize. */
function traced<U extends { runId: string }>(runtime: WorkerRuntime, sweep: Sweep<U>): Sweep<U> {
  const trace = runtime.mergeTrace;
  if (!trace) return sweep;
  return { ...sweep, name: sweep.name, due: (limit) => sweep.due(limit), idOf: (unit) => sweep.idOf(unit), handle: (unit) => trace.withRun(unit.runId, "reconcile", () => sweep.handle(unit)) };
}
