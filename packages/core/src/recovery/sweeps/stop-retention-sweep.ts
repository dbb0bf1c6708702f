// R-RC-7: older acknowledged cancellations that missed the pin. A run a Stop cancelled carries a
// stop acknowledgement; one without a stopRetention record never had its prepared workspace
// pinned (its executor lost the task lock, or it was cancelled before this step existed). At
// startup and on every reconciler pass, a bounded batch of them, oldest first, is handled under
// the run's and the task's row locks: decideStopRetention judges the exact source (its own lease);
// an active lease gets a stop-only intent, which the lease cleanup sweep (the existing stop-only
// cleanup worker) then stops, recording the provider's receipt; a stopping or stopped source is
// recorded as retained under the exact-source checks; anything else is recorded as refused with
// its reason. Nothing reopens the task or starts another turn.
//
// A task lock held by someone else keeps the source active, unwritten, for a later pass.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { recordRunEvent } from "../../records/run-log";
import { readStopAcknowledgement, readStopRetention, STOP_RETENTION_SCHEMA, withStopRecords } from "../../records/run-stop-records";
import { retainStoppedSource } from "../../runs/stop-retention";
import { IDLE_OUTCOME, type Sweep, type SweepLog } from "./sweep";

const MALFORMED_REQUEST_ID = "00000000-0000-0000-0000-000000000000";

export interface StopRetentionUnit {
  runId: string;
}

export function stopRetentionSweep(deps: { db: PrismaClient; log?: SweepLog }): Sweep<StopRetentionUnit> {
  const { db } = deps;
  return {
    name: "stop_retention",
    idOf: (unit) => unit.runId,
    // Through the partial index heartbeat_runs_stop_retention_due (O(due)); its predicate spells the
    // keys STOP_ACKNOWLEDGEMENT_KEY and STOP_RETENTION_KEY as literals, and so must this query.
    due: (limit) =>
      db.$queryRaw<StopRetentionUnit[]>`
        SELECT id AS "runId" FROM heartbeat_runs
        WHERE status = 'cancelled' AND runner_profile_json ? 'stopAcknowledgement' AND NOT (runner_profile_json ? 'stopRetention')
        ORDER BY finished_at NULLS FIRST, id
        LIMIT ${limit}`,
    handle: (unit) =>
      withTransaction(db, async (tx) => {
        await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${unit.runId}::uuid FOR UPDATE`;
        const run = await tx.heartbeatRun.findUnique({
          where: { id: unit.runId },
          select: { id: true, companyId: true, nativeIssueId: true, status: true, runnerProfileJson: true },
        });
        if (!run || run.status !== "cancelled") return IDLE_OUTCOME;
        if (readStopRetention(run.runnerProfileJson)) return IDLE_OUTCOME;
        const acknowledgement = readStopAcknowledgement(run.runnerProfileJson);
        if (!acknowledgement) {
          // A malformed acknowledgement grants nothing; recorded so it leaves the due set.
          const refused = { schema: STOP_RETENTION_SCHEMA, requestId: MALFORMED_REQUEST_ID, outcome: "refused", reason: "acknowledgement_malformed", leaseId: null, stopIntentRequestId: null, by: "sweep", recordedAt: new Date().toISOString() };
          await tx.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = ${withStopRecords({ stopRetention: refused })}, updated_at = now() WHERE id = ${run.id}::uuid`;
          return "refused";
        }
        const task = await tx.$queryRaw<{ id: string; checkout_run_id: string | null }[]>`
          SELECT id, checkout_run_id FROM issues WHERE id = ${run.nativeIssueId}::uuid FOR UPDATE SKIP LOCKED`;
        if (task.length !== 1) return "task_lock_busy";
        const retention = await retainStoppedSource(tx, { runId: run.id, requestId: acknowledgement.requestId, leaseId: acknowledgement.leaseId, by: "sweep" });
        await tx.$executeRaw`UPDATE heartbeat_runs SET runner_profile_json = ${withStopRecords({ stopRetention: retention })}, updated_at = now() WHERE id = ${run.id}::uuid`;
        // The stopped run's checkout ends, as the executor would have ended it; status and owner stay.
        if (task[0]?.checkout_run_id === run.id) await tx.issue.update({ where: { id: run.nativeIssueId }, data: { checkoutRunId: null } });
        await recordRunEvent(tx, {
          companyId: run.companyId,
          runId: run.id,
          level: retention.outcome === "refused" ? "warn" : "info",
          code: "run.stop_retention",
          message:
            retention.outcome === "pinned"
              ? "Recovery pinned the stopped run's sandbox (stop only, files kept); the lease cleanup stops it."
              : `Recovery recorded the stopped run's sandbox: ${retention.outcome} (${retention.reason}).`,
          payload: { ...retention },
        });
        deps.log?.info({ runId: run.id, outcome: retention.outcome, reason: retention.reason, leaseId: retention.leaseId }, "reconciler recorded a stopped run's retention");
        return retention.outcome;
      }),
  };
}
