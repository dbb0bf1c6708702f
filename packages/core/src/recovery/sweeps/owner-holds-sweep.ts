// Maintenance of unverified-owner holds (R-OWN-5, R-ATT-4): stale holds (their receipt replaced,
// or their coordinator settled) are resolved by the system, and every open hold keeps the
// copyback-specific instructions, also older ones whose budget was spent. Both are single
// statements that write only what differs, so repeated passes write nothing.
import type { PrismaClient } from "@copyback/db/client";
import { cleanupStaleOwnerActions, refreshOwnerHoldInstructions } from "../../records/actions";
import { IDLE_OUTCOME, type Sweep } from "./sweep";

export function ownerHoldsSweep(deps: { db: PrismaClient }): Sweep<"pass"> {
  return {
    name: "owner_holds",
    wholePassUnit: true,
    idOf: () => "pass",
    due: async () => ["pass"],
    async handle() {
      const refreshed = await refreshOwnerHoldInstructions(deps.db);
      const stale = await cleanupStaleOwnerActions(deps.db, 500);
      // "idle" is not counted as an outcome (the worker logs only passes that did something).
      return refreshed === 0 && stale === 0 ? IDLE_OUTCOME : `refreshed_${refreshed}_stale_${stale}`;
    },
  };
}
