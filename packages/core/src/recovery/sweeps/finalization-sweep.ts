// The finalization sweep: due coordinators (result_accepted, workspace_finalizing,
// arbitrating, retryable_failure past next_attempt_at) are selected through the index on
// (phase, next_attempt_at), O(unfinished), the oldest of each company first (fair across companies), and
// finalized by the SAME finalizeRun as the live path, under the same advisory lock. A busy run is
// skipped with nothing written and no retry spent (R-OWN-2); finalizeRun re-reads the terminal
// state, the retry time and the barrier under ownership (R-OWN-3, R-OWN-4).
//
// A run still in result_accepted whose recorded controller lives (or cannot be observed from this
// host) is left to it: its agent may still be working after its finish call, and no export may
// start under it. Runs held by an open unverified-owner action for their current receipt are not
// selected at all: only an operator's attestation (or the receipt changing) makes them due again.
import { Prisma, type PrismaClient } from "@copyback/db/client";
import { leaseOutcomeAfterFinalize } from "../../finalization/finalize-outcome-policy";
import { finalizeRun, type FinalizeRunDeps } from "../../finalization/finalize-run";
import { releaseLeaseByPolicy } from "../../leases/release-lease";
import type { LeaseProviderRegistry } from "../../leases/lease-types";
import { readAgentProcess } from "../../records/agent-process";
import { probeProcess } from "../../process/read-process-identity";
import { controllerLiveness } from "./controller-liveness";
import { OWNER_UNVERIFIED_CAUSE } from "../../records/causes";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "../../records/actions";
import { runOnHostSql } from "./host-bound-sweep";
import type { Sweep, SweepLog } from "./sweep";

export interface FinalizationUnit {
  runId: string;
  companyId: string;
}

export interface FinalizationSweepDeps extends FinalizeRunDeps {
  registry: FinalizeRunDeps["registry"] & LeaseProviderRegistry;
  log?: SweepLog;
  /** Whether this process executes the run now (its own runs it judges without a probe). */
  executesHere?: (runId: string) => boolean;
  /** Issue 23: this worker's host id; only runs of unbound or this host's workspaces are due here. */
  hostId?: string;
}

/** The due selection, shared with bench/reconciler.ts (which prints its plan). */
export function dueFinalizationsSql(limit: number, hostId?: string): Prisma.Sql {
  // Coordinators exist only for native runs (claimQueuedRuns creates them), so heartbeat_runs is
  // read only inside the hold exclusion, by primary key, for the few held rows; the unfinished
  // coordinators come from the (phase, next_attempt_at) index (bench/reconciler.ts prints the plan).
  return Prisma.sql`
    WITH due AS (
      SELECT f.run_id, f.company_id,
             row_number() OVER (PARTITION BY f.company_id ORDER BY COALESCE(f.next_attempt_at, f.updated_at), f.run_id) AS company_rank,
             COALESCE(f.next_attempt_at, f.updated_at) AS due_at
      FROM native_run_finalizations f
      WHERE f.phase IN ('result_accepted', 'workspace_finalizing', 'arbitrating', 'retryable_failure')
        AND (f.phase <> 'retryable_failure' OR f.next_attempt_at IS NULL OR f.next_attempt_at <= now())
        AND NOT EXISTS (
          SELECT 1 FROM issue_recovery_actions a JOIN heartbeat_runs r ON r.id = a.run_id
          WHERE a.run_id = f.run_id AND a.cause = ${OWNER_UNVERIFIED_CAUSE} AND a.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}
            AND a.evidence ->> 'ownerToken' = r.runner_profile_json -> 'nativeWorkspaceFinalizationOwner' ->> 'token'
        )
        AND ${runOnHostSql(Prisma.sql`f.run_id`, hostId)}
    )
    SELECT run_id AS "runId", company_id AS "companyId" FROM due
    ORDER BY company_rank, due_at, run_id
    LIMIT ${limit}`;
}

export function finalizationSweep(deps: FinalizationSweepDeps): Sweep<FinalizationUnit> {
  const db: PrismaClient = deps.db;
  return {
    name: "finalization",
    idOf: (unit) => unit.runId,
    due: (limit) => db.$queryRaw<FinalizationUnit[]>(dueFinalizationsSql(limit, deps.hostId)),
    async handle(unit) {
      const run = await db.heartbeatRun.findUnique({
        where: { id: unit.runId },
        select: { controllerPid: true, controllerProcessStart: true, controllerBootId: true, controllerHost: true, runnerProfileJson: true, finalization: { select: { phase: true, failureDetail: true } } },
      });
      if (!run?.finalization) return "gone";
      // R-EX-2: a run re-admitted by an export-only retry has no agent turn and no live controller
      // to wait for: its agent finished long ago and the retry stands in for the controller.
      if (run.finalization.phase === "result_accepted" && !readmittedByExportRetry(run.finalization.failureDetail)) {
        // No export while the agent may still write: its recorded process must be gone.
        const agent = readAgentProcess(run.runnerProfileJson);
        if (agent && (await probeProcess(agent)).kind !== "dead") return "skipped_agent_alive";
        if (run.controllerPid !== null && run.controllerProcessStart && run.controllerBootId && run.controllerHost && deps.controller) {
          const recorded = { pid: run.controllerPid, startTime: run.controllerProcessStart, bootId: run.controllerBootId, host: run.controllerHost };
          const controller = await controllerLiveness({ self: deps.controller, executesHere: deps.executesHere }, unit.runId, recorded);
          if (controller.kind !== "dead") return `skipped_controller_${controller.kind}`;
        }
      }
      const outcome = await finalizeRun(deps, { runId: unit.runId });
      const leaseOutcome = leaseOutcomeAfterFinalize(outcome);
      if (leaseOutcome !== null) await releaseRunLeases(deps, unit.runId, leaseOutcome);
      deps.log?.info({ runId: unit.runId, outcome: outcome.kind }, "reconciler finalized a run");
      return outcome.kind;
    },
  };
}

function readmittedByExportRetry(detail: unknown): boolean {
  if (typeof detail !== "object" || detail === null) return false;
  const readmission = (detail as Record<string, unknown>).readmission;
  return typeof readmission === "object" && readmission !== null && (readmission as Record<string, unknown>).by === "export_retry";
}

/**
 * Releases every lease of the run that still has a sandbox by policy, as the live path does after
 * finalization. Released ones included: the live path stopped and released the sandbox
 * when the first attempt failed transiently, and after the retry's commit an ephemeral one is
 * destroyed by its policy (release-lease.ts destroyAfterRetriedCommit) instead of being leaked.
 */
async function releaseRunLeases(deps: FinalizationSweepDeps, runId: string, outcome: "committed" | "failed"): Promise<void> {
  const leases = await deps.db.environmentLease.findMany({
    where: { runId, status: { in: ["active", "pending_cleanup", "released"] } },
    select: { id: true },
  });
  for (const lease of leases) {
    try {
      await releaseLeaseByPolicy(deps.db, deps.registry, { leaseId: lease.id, runId, outcome });
    } catch (error) {
      deps.log?.warn({ runId, leaseId: lease.id, err: error }, "reconciler could not release a lease by policy");
    }
  }
}
