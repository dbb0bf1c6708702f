// The orphan sweep: running native runs whose recorded controller is gone from this host.
// decideOrphan decides (R-ORP-1): the finalizer owns a run with an accepted result bound to the
// coordinator, also before it took its receipt, so such a run is never turned into process_lost
// here; a settled coordinator under a running run ends the run the way the coordinator ended; a
// run without an accepted result ends `process_lost` through a conditional write that re-checks
// the heartbeat's tuple version (xmin) and the durable result (R-ORP-2). Its lease is left exactly
// as it is (the sandbox may hold unpublished edits; pinning it and the board's file-recovery
// obligation are the file-recovery issue's, R-FO-1).
//
// Only runs recorded on this host are selected: another host's controller cannot be probed. A run
// of this very process that it no longer executes counts as orphaned (controller-liveness.ts).
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import type { ProcessIdentity } from "../../process/process-identity";
import { controllerLiveness } from "./controller-liveness";
import { recordRunEvent } from "../../runs/run-log";
import { completeRun, failRunInTransaction } from "../../runs/settle-run";
import { decideOrphan } from "../policies/decide-orphan";
import type { Sweep, SweepLog } from "./sweep";

export interface OrphanUnit {
  runId: string;
  /** heartbeat_runs.xmin when selected: the conditional write refuses a changed row (R-ORP-2). */
  xmin: string;
  controller: ProcessIdentity;
}

export const PROCESS_LOST_CODE = "process_lost";

export function orphanSweep(deps: { db: PrismaClient; controller: ProcessIdentity; log?: SweepLog; executesHere?: (runId: string) => boolean }): Sweep<OrphanUnit> {
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
        select: { id: true, companyId: true, nativeIssueId: true, status: true, finalization: { select: { phase: true, resultId: true, companyId: true, issueId: true, failureCode: true } } },
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
        case "process_lost":
          return markProcessLost(db, unit, deps.log);
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

/** R-ORP-2: fails the run only if its row is the version the sweep saw and no result was accepted since. */
export async function markProcessLost(db: PrismaClient, unit: OrphanUnit, log?: SweepLog): Promise<string> {
  return withTransaction(db, async (tx) => {
    // Waits for a publisher holding the row; once it commits, the row's xmin differs and the
    // row no longer qualifies (the WHERE is re-checked on the newest version).
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM heartbeat_runs WHERE id = ${unit.runId}::uuid AND xmin::text = ${unit.xmin} AND status = 'running' FOR UPDATE`;
    if (locked.length !== 1) return "lost_race";
    // A new statement: its snapshot sees a result committed while this one waited.
    const accepted = await tx.nativeRunResult.findFirst({ where: { runId: unit.runId, schemaStatus: "accepted" }, select: { id: true } });
    if (accepted) return "lost_race";
    const outcome = await failRunInTransaction(tx, {
      runId: unit.runId,
      code: PROCESS_LOST_CODE,
      message: "The controller running this run is gone and the agent submitted no result; the sandbox is kept as it is.",
    });
    const run = await tx.heartbeatRun.findUniqueOrThrow({ where: { id: unit.runId }, select: { companyId: true } });
    await recordRunEvent(tx, {
      companyId: run.companyId,
      runId: unit.runId,
      level: "warn",
      code: "run.process_lost",
      message: "The run's controller exited before the agent's result; the run failed and its sandbox lease was left untouched.",
      payload: { controllerPid: unit.controller.pid },
    });
    log?.warn({ runId: unit.runId, outcome: outcome.kind }, "orphaned run marked process_lost");
    return "process_lost";
  });
}
