// The audit row of a change, written with the transaction client of that change so that both
// commit together or neither does (DESIGN.md section 7).
import type { Prisma, TransactionClient } from "@copyback/db/client";
import type { Actor } from "./actor";

export interface ActivityEntry {
  companyId: string;
  actor: Actor;
  /** Dotted verb, e.g. "issue.status_changed". */
  action: string;
  entityType: string;
  entityId: string;
  details: Prisma.InputJsonObject;
}

export async function recordActivity(tx: TransactionClient, entry: ActivityEntry): Promise<void> {
  await tx.activityLog.create({
    data: {
      companyId: entry.companyId,
      actorType: entry.actor.type,
      actorId: entry.actor.id,
      action: entry.action,
      entityType: entry.entityType,
      entityId: entry.entityId,
      details: entry.details,
    },
  });
}
