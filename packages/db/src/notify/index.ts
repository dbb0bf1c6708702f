export {
  LIVE_EVENTS_CHANNEL,
  LIVE_EVENT_ENTITIES,
  liveEventSchema,
  parseLiveEvent,
  type LiveEvent,
  type LiveEventEntity,
} from "./live-event";
export { LIVE_NOTIFY_FUNCTION, LIVE_NOTIFY_TRIGGERS, type LiveNotifyTrigger } from "./triggers";
export { reconnectDelayMs, type BackoffOptions } from "./backoff";
export {
  startNotificationListener,
  type ListenerState,
  type NotificationListener,
  type NotificationListenerOptions,
} from "./listener";
