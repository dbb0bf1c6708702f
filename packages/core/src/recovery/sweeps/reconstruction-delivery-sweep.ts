// R-RC-5: the reconciler's delivery of pending reconstruction intents (reconstruction/deliver-intent.ts).
import { deliverReconstruction, type DeliveryDeps } from "../reconstruction/deliver-intent";
import { IDLE_OUTCOME, type Sweep, type SweepLog } from "./sweep";

/**
 * The reconciler's sweep that delivers pending intents, oldest first, in bounded batches. The
 * pending set is small and read through reconstruction_intents' own rows (O(pending)); a refused
 * intent stays pending and is looked at again on a later pass without a write.
 */
export function reconstructionDeliverySweep(deps: DeliveryDeps & { log?: SweepLog }): Sweep<{ intentId: string }> {
  return {
    name: "reconstruction_delivery",
    idOf: (unit) => unit.intentId,
    due: (limit) =>
      deps.db.reconstructionIntent
        .findMany({ where: { status: "pending" }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], select: { id: true }, take: limit })
        .then((rows) => rows.map((r) => ({ intentId: r.id }))),
    handle: async (unit) => {
      const outcome = await deliverReconstruction(deps, unit.intentId);
      if (outcome.kind === "refused") deps.log?.info({ intentId: unit.intentId, code: outcome.code }, "reconstruction not delivered yet");
      return outcome.kind === "delivered" ? "delivered" : IDLE_OUTCOME;
    },
  };
}
