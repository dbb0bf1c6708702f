// The audit row of a change, written with the transaction client of that change so that both
// commit together or neither does (the same shape as apps/web's recordActivity; core cannot
// import the web app, and the worker writes activity too).
import type { ActorType, Prisma, TransactionClient } from "@copyback/db/client";

export interface Actor {
  type: ActorType;
  /** The user id or agent id; null for the system and the trusted local board. */
  id: string | null;
}

export const SYSTEM_ACTOR: Actor = { type: "system", id: null };

export interface ActivityEntry {
  companyId: string;
  actor: Actor;
  /** Dotted verb, e.g. "issue.status_changed". */
  action: string;
  entityType: "issue" | "run";
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
