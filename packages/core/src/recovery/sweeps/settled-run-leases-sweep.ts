// Leases left `active` under runs that already settled (succeeded, failed, cancelled, timed out):
// the controller that settled the run died before its release by policy (the torture suite found
// such leases after a worker was killed right after a commit). The sweep finishes that release
// exactly as the live path would have, by the run's outcome (committed -> release as committed;
// anything else -> as failed, which stops and retains the sandbox with its files); also a
// released ephemeral or retain_on_failure sandbox of a committed run (kept through a transient
// retry), which the release as committed destroys after the barrier (release-lease.ts). A run whose
// controller lives, or cannot be observed from this host, is left to it: it releases its own
// lease in a moment.
import type { PrismaClient } from "@copyback/db/client";
import { leaseHeldSql } from "../../leases/lease-holds";
import type { LeaseProviderRegistry } from "../../leases/lease-types";
import { releaseLeaseByPolicy } from "../../leases/release-lease";
import type { ProcessIdentity } from "../../process/process-identity";
import { probeProcess } from "../../process/read-process-identity";
import { readStopAcknowledgement, readStopRetention } from "../../records/run-stop-records";
import { controllerLiveness } from "./controller-liveness";
import { leaseOnHostSql } from "./host-bound-sweep";
import type { Sweep, SweepLog } from "./sweep";

export interface SettledRunLeaseUnit {
  leaseId: string;
  runId: string;
}

export function settledRunLeasesSweep(deps: {
  db: PrismaClient;
  registry: LeaseProviderRegistry;
  log?: SweepLog;
  /** This process and what it executes: its own runs are judged without a probe. */
  controller?: ProcessIdentity;
  executesHere?: (runId: string) => boolean;
  /** Issue 23: this worker's host id; another host's local sandboxes are never due here. */
  hostId?: string;
}): Sweep<SettledRunLeaseUnit> {
  const { db } = deps;
  return {
    name: "settled_run_leases",
    idOf: (unit) => unit.leaseId,
    due: (limit) =>
      db.$queryRaw<SettledRunLeaseUnit[]>`
        SELECT l.id AS "leaseId", l.run_id AS "runId"
        FROM environment_leases l JOIN heartbeat_runs r ON r.id = l.run_id
        WHERE ((l.status = 'active' AND r.status IN ('succeeded', 'failed', 'cancelled', 'timed_out')
          -- R-RC-7: a stopped run whose retention was deferred (task lock lost) keeps its source
          -- active for the stop-retention sweep, which pins it under the task lock.
          AND NOT (r.status = 'cancelled' AND r.runner_profile_json ? 'stopAcknowledgement' AND NOT (r.runner_profile_json ? 'stopRetention')))
          -- R-EX-2: a sandbox stopped and released while its run's copyback waited for a retry,
          -- whose policy destroys it after a commit, once that commit happened and nothing else
          -- holds it (the controller that committed died before its release by policy).
          OR (l.status = 'released' AND l.lease_policy IN ('ephemeral', 'retain_on_failure') AND r.status = 'succeeded'
              AND EXISTS (SELECT 1 FROM native_run_finalizations nf WHERE nf.run_id = r.id AND nf.phase = 'committed')
              AND NOT ${leaseHeldSql("l")}))
          AND ${leaseOnHostSql("l", deps.hostId)}
        ORDER BY l.updated_at, l.id
        LIMIT ${limit}`,
    async handle(unit) {
      const run = await db.heartbeatRun.findUnique({
        where: { id: unit.runId },
        select: { status: true, controllerPid: true, controllerProcessStart: true, controllerBootId: true, controllerHost: true, runnerProfileJson: true },
      });
      if (!run || run.status === "queued" || run.status === "running") return "run_not_settled";
      if (run.status === "cancelled" && readStopAcknowledgement(run.runnerProfileJson) && !readStopRetention(run.runnerProfileJson)) return "left_stop_retention";
      if (run.controllerPid !== null && run.controllerProcessStart && run.controllerBootId && run.controllerHost) {
        const recorded = { pid: run.controllerPid, startTime: run.controllerProcessStart, bootId: run.controllerBootId, host: run.controllerHost };
        const controller = deps.controller
          ? await controllerLiveness({ self: deps.controller, executesHere: deps.executesHere }, unit.runId, recorded)
          : await probeProcess(recorded);
        if (controller.kind !== "dead") return `left_controller_${controller.kind}`;
      }
      const released = await releaseLeaseByPolicy(db, deps.registry, { leaseId: unit.leaseId, runId: unit.runId, outcome: run.status === "succeeded" ? "committed" : "failed" });
      deps.log?.info({ leaseId: unit.leaseId, runId: unit.runId, result: released.kind }, "reconciler released the lease of a settled run");
      return released.kind;
    },
  };
}
