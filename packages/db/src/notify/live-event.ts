// The payload of a `copyback_events` notification, as the trigger function of the migration
// `live_notifications` builds it (replaced by `reconstruction_intents_live_notify`, then by
// `issue_attachments_live_notify`). Ids only: a listener reads the rows themselves through the
// authorized API, so a notification never carries anything a subscriber may not see.
import { z } from "zod";

/** The channel every live-change notification is sent on. */
export const LIVE_EVENTS_CHANNEL = "copyback_events";

/** The tables whose changes are announced, one trigger each (see triggers.ts). */
export const LIVE_EVENT_ENTITIES = [
  "issues",
  "issue_messages",
  "heartbeat_runs",
  "issue_recovery_actions",
  "run_events",
  "activity_log",
  // Migration reconstruction_intents_live_notify: "Continue from saved sources" intents (R-RC-3).
  "reconstruction_intents",
  // Migration issue_attachments_live_notify: a task's files (the Attachments section, and the
  // sources "Continue from saved sources" offers, R-RC-3 R-UI-3).
  "issue_attachments",
] as const;

export type LiveEventEntity = (typeof LIVE_EVENT_ENTITIES)[number];

export const liveEventSchema = z.object({
  companyId: z.uuid(),
  entity: z.enum(LIVE_EVENT_ENTITIES),
  id: z.uuid(),
  /** The issue the row belongs to, when it belongs to one. */
  issueId: z.uuid().nullable(),
  /** The run the row belongs to, when it belongs to one. */
  runId: z.uuid().nullable(),
  op: z.enum(["INSERT", "UPDATE", "DELETE"]),
});

export type LiveEvent = z.infer<typeof liveEventSchema>;

/**
 * Parses a notification payload; null for anything else (a payload from an older or newer
 * trigger, or a stray `NOTIFY copyback_events` from psql), which listeners skip.
 */
export function parseLiveEvent(payload: string | undefined): LiveEvent | null {
  if (!payload) return null;
  let json: unknown;
  try {
    json = JSON.parse(payload);
  } catch {
    return null;
  }
  const parsed = liveEventSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}
