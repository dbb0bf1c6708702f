// R-RC-5: the reconciler's delivery of pending reconstruction intents (reconstruction/deliver-intent.ts).
// Issue 23 (host affinity): host-bound like the finalization sweep, by the intent's source run's
// workspace. The delivery hashes the saved attachments' bytes under this instance root and its
// fresh run can start only on the workspace's host, which rechecks them at claim; on another host
// a missing byte would read as attachment_unavailable and cancel the intent for good.
import { Prisma } from "@copyback/db/client";
import { deliverReconstruction, type DeliveryDeps } from "../reconstruction/deliver-intent";
import { runOnHostSql } from "./host-bound-sweep";
import { IDLE_OUTCOME, type Sweep, type SweepLog } from "./sweep";

/**
 * The reconciler's sweep that delivers pending intents, oldest first and fairly across companies, in bounded batches, through
 * the partial index of the pending set; a refused intent stays pending and is looked at again on a
 * later pass, its deferral (why it waits, R-RC-3) written only when the refusal's code changes.
 */
export function reconstructionDeliverySweep(deps: DeliveryDeps & { log?: SweepLog; /** Issue 23: this worker's host id. */ hostId?: string }): Sweep<{ intentId: string }> {
  return {
    name: "reconstruction_delivery",
    idOf: (unit) => unit.intentId,
    // The pending set through the partial index reconstruction_intents_pending (O(due): its
    // predicate is this WHERE), the oldest of each company first (fair across companies).
    due: (limit) =>
      deps.db.$queryRaw<{ intentId: string }[]>`
        WITH due AS (
          SELECT id, created_at, row_number() OVER (PARTITION BY company_id ORDER BY created_at, id) AS company_rank
          FROM reconstruction_intents
          WHERE status = 'pending' AND ${runOnHostSql(Prisma.sql`source_run_id`, deps.hostId)}
        )
        SELECT id AS "intentId" FROM due
        ORDER BY company_rank, created_at, id
        LIMIT ${limit}`,
    handle: async (unit) => {
      const outcome = await deliverReconstruction(deps, unit.intentId);
      if (outcome.kind === "refused") deps.log?.info({ intentId: unit.intentId, code: outcome.code }, "reconstruction not delivered yet");
      return outcome.kind === "delivered" ? "delivered" : IDLE_OUTCOME;
    },
  };
}
