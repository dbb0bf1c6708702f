// The database objects the hand-written migrations `live_notifications`,
// `reconstruction_intents_live_notify` and `issue_attachments_live_notify` create. Prisma does not
// introspect triggers or functions, so no schema diff sees them; the notify integration test
// checks that a migrated database has each of them.
import { LIVE_EVENT_ENTITIES, type LiveEventEntity } from "./live-event";

export const LIVE_NOTIFY_FUNCTION = "copyback_notify_live_change";

export interface LiveNotifyTrigger {
  name: string;
  table: LiveEventEntity;
}

export const LIVE_NOTIFY_TRIGGERS: readonly LiveNotifyTrigger[] = LIVE_EVENT_ENTITIES.map(
  (table) => ({
    name: `${table}_live_notify`,
    table,
  }),
);
