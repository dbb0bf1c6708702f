// What the task notice needs of a hold's "Continue from saved sources" intent (R-RC-3, R-RC-5):
// its status, and when its delivery was refused and the intent cancelled, the refusal's code. Core
// records no refusal on the intent row itself; the one activity row each cancellation writes says
// why: `recovery.reconstruction_cancelled` (reconstruction/deliver-intent.ts, refused at delivery)
// and `recovery.reconstruction_withdrawn` (reconstruction/dispatch-gate.ts, refused at claim or
// provider handoff), entity the hold, details.code. The newest one is the last refusal: a fresh
// decision replaces the cancelled intent in place (pending again), and is cancelled, if ever,
// by a newer row. A pending intent's deferral (why its delivery waits, R-RC-3) is on the intent
// row itself (deferral_code, deferred_since, deferral_seen_at; deliver-intent.ts). Reads only; deriveTaskNotice (task-notice.ts) decides what it means.
import { z } from "zod";
import type { DbOrTx } from "../records/run-log";
import type { NoticeAction, ReconstructionDeferral } from "./task-notice";

/** The activity a refusal at delivery writes (reconstruction/deliver-intent.ts). */
export const RECONSTRUCTION_CANCELLED_ACTIVITY = "recovery.reconstruction_cancelled";
/** The activity a refusal at claim or provider handoff writes (reconstruction/dispatch-gate.ts). */
export const RECONSTRUCTION_WITHDRAWN_ACTIVITY = "recovery.reconstruction_withdrawn";
export const RECONSTRUCTION_REFUSAL_ACTIVITIES = [RECONSTRUCTION_CANCELLED_ACTIVITY, RECONSTRUCTION_WITHDRAWN_ACTIVITY] as const;

/** The deferral columns cleared: on delivery, on cancellation and on a fresh decision (deliver-intent.ts, reconstruct-workspace.ts). */
export const NO_DEFERRAL = { deferralCode: null, deferralMessage: null, deferredSince: null, deferralSeenAt: null } as const;

export type ReconstructionState = NonNullable<NoticeAction["reconstruction"]>;

const refusalDetails = z.object({ code: z.string().min(1) });

/** The refusal code an activity row's details carry; null for anything unreadable (it grants nothing, it only words the notice). */
export function readRefusalCode(details: unknown): string | null {
  const parsed = refusalDetails.safeParse(details);
  return parsed.success ? parsed.data.code : null;
}

/** A pending intent's recorded deferral; null without a code (or a row missing its times). */
export function deferralOf(intent: { deferralCode: string | null; deferredSince: Date | null; deferralSeenAt: Date | null }): ReconstructionDeferral | null {
  if (intent.deferralCode === null || intent.deferredSince === null) return null;
  return { code: intent.deferralCode, since: intent.deferredSince, lastSeenAt: intent.deferralSeenAt ?? intent.deferredSince };
}

/** The intent state of each of `actionIds` that has an intent (two queries, both by index). */
export async function reconstructionStates(db: DbOrTx, companyId: string, actionIds: readonly string[]): Promise<Map<string, ReconstructionState>> {
  const states = new Map<string, ReconstructionState>();
  if (actionIds.length === 0) return states;
  const intents = await db.reconstructionIntent.findMany({
    where: { companyId, recoveryActionId: { in: [...actionIds] } },
    select: { recoveryActionId: true, status: true, deferralCode: true, deferredSince: true, deferralSeenAt: true },
  });
  const cancelled = intents.filter((i) => i.status === "cancelled").map((i) => i.recoveryActionId);
  const refusals = new Map<string, string | null>();
  if (cancelled.length > 0) {
    const rows = await db.activityLog.findMany({
      where: { companyId, entityType: "issue_recovery_action", entityId: { in: cancelled }, action: { in: [...RECONSTRUCTION_REFUSAL_ACTIVITIES] } },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { entityId: true, details: true },
    });
    // Newest first: the first row of each hold is its last refusal.
    for (const row of rows) if (row.entityId && !refusals.has(row.entityId)) refusals.set(row.entityId, readRefusalCode(row.details));
  }
  for (const intent of intents) {
    states.set(intent.recoveryActionId, {
      status: intent.status,
      refusalCode: intent.status === "cancelled" ? (refusals.get(intent.recoveryActionId) ?? null) : null,
      deferral: intent.status === "pending" ? deferralOf(intent) : null,
    });
  }
  return states;
}
