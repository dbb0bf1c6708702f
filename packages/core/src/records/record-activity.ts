// The audit row of a change, written with the transaction client of that change so that both
// commit together or neither does (DESIGN.md section 7). The one writer of activity rows: the
// web app's routers and the worker's services both use it.
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
  /** What the row is about: "issue", "run", "agent_api_key", ... */
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
