// The process's live feed: one dedicated LISTEN connection (started on the first subscriber,
// never from the pool) feeding a LiveHub. After the connection comes back from an outage every
// subscriber is told to resync, because PostgreSQL does not replay what it sent meanwhile.
import {
  LIVE_EVENTS_CHANNEL,
  parseLiveEvent,
  startNotificationListener,
  type BackoffOptions,
  type NotificationListener,
} from "@copyback/db/notify";
import { LiveHub, type LiveSink } from "./live-hub";

export interface LiveFeedOptions {
  databaseUrl: string;
  applicationName?: string;
  backoff?: BackoffOptions;
  probeIntervalMs?: number;
  onError?: (error: unknown) => void;
}

export interface LiveFeed {
  /** Subscribes to one company's changes (the caller has authorized it). Starts listening if needed. */
  subscribe(companyId: string, sink: LiveSink): () => void;
  /** Whether the LISTEN connection is up right now. */
  isListening(): boolean;
  /** Resolves once the LISTEN connection is first up (starts it if needed). */
  ready(): Promise<void>;
  /** The LISTEN connection's server pid, for diagnostics and tests. */
  backendPid(): number | undefined;
  subscriberCount(companyId?: string): number;
  stop(): Promise<void>;
}

export function createLiveFeed(options: LiveFeedOptions): LiveFeed {
  const onError = options.onError ?? ((error: unknown) => console.error("[copyback live]", error));
  const hub = new LiveHub(onError);
  let listener: NotificationListener | undefined;
  let listening = false;

  const start = (): NotificationListener =>
    (listener ??= startNotificationListener({
      databaseUrl: options.databaseUrl,
      channels: [LIVE_EVENTS_CHANNEL],
      applicationName: options.applicationName ?? "copyback-web-listen",
      backoff: options.backoff,
      probeIntervalMs: options.probeIntervalMs,
      onHandlerError: onError,
      onNotification: (_channel, payload) => {
        const event = parseLiveEvent(payload);
        if (event) hub.publish(event);
      },
      onListening: ({ resumed }) => {
        listening = true;
        hub.broadcast({ kind: "status", status: { listening: true } });
        if (resumed) hub.broadcast({ kind: "resync" });
      },
      onStateChange: (state) => {
        if (state === "listening" || !listening) return;
        listening = false;
        hub.broadcast({ kind: "status", status: { listening: false } });
      },
    }));

  return {
    subscribe(companyId, sink) {
      start();
      return hub.subscribe(companyId, sink);
    },
    isListening: () => listening,
    ready: () => start().ready(),
    backendPid: () => listener?.backendPid(),
    subscriberCount: (companyId) => hub.subscriberCount(companyId),
    async stop() {
      const current = listener;
      listener = undefined;
      listening = false;
      await current?.stop();
    },
  };
}
