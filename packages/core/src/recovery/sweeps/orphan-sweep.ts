// The orphan sweep: running native runs whose recorded controller is gone from this host.
// decideOrphan decides (R-ORP-1): the finalizer owns a run with an accepted result bound to the
// coordinator, also before it took its receipt, so such a run is never turned into process_lost
// here; a settled coordinator under a running run ends the run the way the coordinator ended.
//
// A run without an accepted result (R-FO-1): an agent process group that still lives with the
// recorded PID AND start time is stopped first, its whole group (SIGTERM, SIGKILL after a grace,
// gone verified in /proc; a reused PID is never signalled: process/stop-process-group.ts); one
// that cannot be stopped or judged leaves the run for the next pass, because failing it while the
// agent still writes would let the files change under the retained sandbox. Then ONE transaction
// (recovery/file-recovery.ts): the run fails `process_lost` through a conditional write that
// re-checks the heartbeat's tuple version (xmin) and the durable result (R-ORP-2), the exact bound
// sandbox is pinned by a stop-only intent and one board-owned file-recovery obligation naming the
// run, lease and allocation is opened. The cleanup sweep then stops and retains that lease
// (never a release for reuse, never a destroy).
//
// Only runs recorded on this host are selected: another host's controller cannot be probed. A run
// of this very process that it no longer executes counts as orphaned (controller-liveness.ts).
import { Prisma, withTransaction, type PrismaClient } from "@copyback/db/client";
import { readAgentProcess } from "../../records/agent-process";
import type { ProcessIdentity } from "../../process/process-identity";
import { stopRecordedProcessGroup, type GroupStopOutcome } from "../../process/stop-process-group";
import { controllerLiveness } from "./controller-liveness";
import { completeRun, failRunInTransaction } from "../../runs/settle-run";
import type { FileRecoveryEvidence } from "../../records/actions";
import { failRunBeforeResult } from "../file-recovery";
import { decideOrphan } from "../policies/decide-orphan";
import { runOnHostSql } from "./host-bound-sweep";
import type { Sweep, SweepLog } from "./sweep";

export interface OrphanUnit {
  runId: string;
  /** heartbeat_runs.xmin when selected: the conditional write refuses a changed row (R-ORP-2). */
  xmin: string;
  controller: ProcessIdentity;
}

export const PROCESS_LOST_CODE = "process_lost";

export function orphanSweep(deps: {
  db: PrismaClient;
  controller: ProcessIdentity;
  log?: SweepLog;
  executesHere?: (runId: string) => boolean;
  /** SIGTERM's grace before SIGKILL when an orphaned agent group is stopped (tests shorten it). */
  agentStopGraceMs?: number;
  /** Issue 23: this worker's host id; only runs of unbound or this host's workspaces are due here. */
  hostId?: string;
}): Sweep<OrphanUnit> {
  const view = { self: deps.controller, executesHere: deps.executesHere };
  const { db } = deps;
  return {
    name: "orphans",
    idOf: (unit) => unit.runId,
    async due(limit) {
      const rows = await db.$queryRaw<{ id: string; xmin: string; pid: number; start: string; boot: string; host: string }[]>`
        SELECT id, xmin::text AS xmin, controller_pid AS pid, controller_process_start AS start, controller_boot_id AS boot, controller_host AS host
        FROM heartbeat_runs
        WHERE status = 'running' AND runtime_mode = 'native' AND controller_host = ${deps.controller.host}
          AND controller_pid IS NOT NULL AND controller_process_start IS NOT NULL AND controller_boot_id IS NOT NULL
          AND ${runOnHostSql(Prisma.sql`heartbeat_runs.id`, deps.hostId)}
        ORDER BY updated_at, id
        LIMIT ${limit}`;
      const units: OrphanUnit[] = [];
      for (const row of rows) {
        const controller = { pid: row.pid, startTime: row.start, bootId: row.boot, host: row.host };
        if ((await controllerLiveness(view, row.id, controller)).kind === "dead") units.push({ runId: row.id, xmin: row.xmin, controller });
      }
      return units;
    },
    async handle(unit) {
      const run = await db.heartbeatRun.findUnique({
        where: { id: unit.runId },
        select: { id: true, companyId: true, nativeIssueId: true, status: true, runnerProfileJson: true, finalization: { select: { phase: true, resultId: true, companyId: true, issueId: true, failureCode: true } } },
      });
      if (!run || run.status !== "running") return "settled_elsewhere";
      const accepted = await db.nativeRunResult.findFirst({
        where: { runId: run.id, schemaStatus: "accepted" },
        orderBy: { createdAt: "asc" },
        select: { id: true, companyId: true, issueId: true },
      });
      const decision = decideOrphan({
        controller: await controllerLiveness(view, unit.runId, unit.controller),
        coordinator: run.finalization,
        run: { companyId: run.companyId, issueId: run.nativeIssueId },
        acceptedResult: accepted,
      });
      switch (decision.kind) {
        case "leave":
          return `left_${decision.reason}`;
        case "settle":
          return settle(db, run.id, decision.as, run.finalization?.failureCode ?? "finalization_failed");
        case "process_lost": {
          // R-FO-1: the surviving agent group is stopped before anything is written.
          const agent = readAgentProcess(run.runnerProfileJson);
          const stop: GroupStopOutcome | null = agent ? await stopRecordedProcessGroup(agent, { graceMs: deps.agentStopGraceMs }) : null;
          if (stop?.kind === "survived" || stop?.kind === "unknown") {
            deps.log?.warn({ runId: run.id, agentPid: agent?.pid, stop }, "orphaned run left running: its agent could not be stopped or judged");
            return stop.kind === "survived" ? "left_agent_survived" : "left_agent_unobservable";
          }
          if (stop?.kind === "stopped") deps.log?.warn({ runId: run.id, agentPid: agent?.pid, signal: stop.signal }, "stopped the orphaned agent's process group");
          return markProcessLost(db, unit, deps.log, { agentProcess: agent, agentStop: agentStopOf(stop) });
        }
      }
    },
  };
}

async function settle(db: PrismaClient, runId: string, as: "committed" | "terminal_failure", failureCode: string): Promise<string> {
  await withTransaction(db, async (tx) => {
    if (as === "committed") await completeRun(tx, { runId });
    else await failRunInTransaction(tx, { runId, code: failureCode, message: `The run's finalization had ended (${failureCode}); the run is closed to match.` });
  });
  return `settled_${as}`;
}

function agentStopOf(stop: GroupStopOutcome | null): FileRecoveryEvidence["agentStop"] {
  if (stop === null) return "not_recorded";
  return stop.kind === "stopped" ? "stopped" : "not_running";
}

/**
 * R-ORP-2, R-FO-1: fails the run only if its row is the version the sweep saw and no result was
 * accepted since; in the same transaction the exact sandbox is pinned and the file-recovery
 * obligation opened, and the dead controller's unfinished preparations are taken over (R-FO-4).
 */
export async function markProcessLost(
  db: PrismaClient,
  unit: OrphanUnit,
  log?: SweepLog,
  agent: { agentProcess: ProcessIdentity | null; agentStop: FileRecoveryEvidence["agentStop"] } = { agentProcess: null, agentStop: null },
): Promise<string> {
  const outcome = await failRunBeforeResult(db, {
    runId: unit.runId,
    code: PROCESS_LOST_CODE,
    // Says nothing of a sandbox: the controller may have died before it acquired one. When the
    // writer retains one, its run.files_retained event and the task's action say so.
    message: "The controller running this run is gone and the agent submitted no result.",
    origin: "controller_lost",
    expectXmin: unit.xmin,
    deadController: unit.controller,
    agentProcess: agent.agentProcess,
    agentStop: agent.agentStop,
    event: {
      code: "run.process_lost",
      message: "The run's controller exited before the agent's result; the run failed.",
      payload: { controllerPid: unit.controller.pid, agentPid: agent.agentProcess?.pid ?? null, agentStop: agent.agentStop },
    },
  });
  switch (outcome.kind) {
    case "lost_race":
    case "already_settled":
      return "lost_race";
    case "refused":
      log?.warn({ runId: unit.runId, reason: outcome.reason }, "orphaned run left: another live owner holds its preparation");
      return `left_${outcome.reason}`;
    case "failed":
    case "files_retained":
      log?.warn({ runId: unit.runId, outcome: outcome.kind, controllerPid: unit.controller.pid }, "orphaned run marked process_lost");
      return "process_lost";
  }
}
