// Work finds its worker at once: the database already announces every change of a run on
// `copyback_events` (packages/db notify triggers), so the worker LISTENs there and ends its
// loop's sleep when a run is queued or changes, instead of waiting out WORKER_POLL_INTERVAL_MS.
// The poll stays as the fallback: a notification sent while the LISTEN connection was down is
// lost (PostgreSQL delivers only to sessions listening at commit), so a reconnect wakes the loop
// once as well, and a pass after every interval still finds whatever nothing announced.
import { LIVE_EVENTS_CHANNEL, parseLiveEvent, startNotificationListener, type ListenerState, type LiveEvent, type NotificationListener } from "@copyback/db/notify";

/**
 * Which announced changes may have made a run claimable: a run inserted (a wake, a retry) or
 * updated (put back in the queue after an outage, a slot of this company freed by a settled run).
 * Anything else (messages, activity, run events) never makes work claimable.
 */
export function wakesDispatch(event: LiveEvent | null): boolean {
  return event !== null && event.entity === "heartbeat_runs" && event.op !== "DELETE";
}

export interface WakeListenerOptions {
  databaseUrl: string;
  /** Ends the dispatch loop's sleep (WorkerLoop.wake: a wake during a pass skips the next sleep). */
  wake: () => void;
  onStateChange?: (state: ListenerState, error?: Error) => void;
}

export function startWakeListener(options: WakeListenerOptions): NotificationListener {
  return startNotificationListener({
    databaseUrl: options.databaseUrl,
    channels: [LIVE_EVENTS_CHANNEL],
    applicationName: "copyback-worker-wake",
    onNotification: (_channel, payload) => {
      if (wakesDispatch(parseLiveEvent(payload))) options.wake();
    },
    // After a reconnect, whatever was announced meanwhile is gone: one pass now finds it.
    onListening: ({ resumed }) => {
      if (resumed) options.wake();
    },
    ...(options.onStateChange ? { onStateChange: options.onStateChange } : {}),
  });
}
