// R-RC-5: the reconciler's delivery of pending reconstruction intents (reconstruction/deliver-intent.ts).
import { deliverReconstruction, type DeliveryDeps } from "../reconstruction/deliver-intent";
import { IDLE_OUTCOME, type Sweep, type SweepLog } from "./sweep";

/**
 * The reconciler's sweep that delivers pending intents, oldest first, in bounded batches, through
 * the partial index of the pending set; a refused intent stays pending and is looked at again on a
 * later pass without a write.
 */
export function reconstructionDeliverySweep(deps: DeliveryDeps & { log?: SweepLog }): Sweep<{ intentId: string }> {
  return {
    name: "reconstruction_delivery",
    idOf: (unit) => unit.intentId,
    // Through the partial index reconstruction_intents_pending (O(due)): its predicate is this WHERE.
    due: (limit) =>
      deps.db.$queryRaw<{ intentId: string }[]>`
        SELECT id AS "intentId" FROM reconstruction_intents
        WHERE status = 'pending'
        ORDER BY created_at, id
        LIMIT ${limit}`,
    handle: async (unit) => {
      const outcome = await deliverReconstruction(deps, unit.intentId);
      if (outcome.kind === "refused") deps.log?.info({ intentId: unit.intentId, code: outcome.code }, "reconstruction not delivered yet");
      return outcome.kind === "delivered" ? "delivered" : IDLE_OUTCOME;
    },
  };
}
