// One browser's server-sent event stream: subscribes on start, writes hub messages as events,
// a comment every 15 s so idle connections survive proxies, and re-checks the subscriber's
// access now and then (a suspended member stops hearing the company). Everything is released
// exactly once, whichever comes first: the client going away (request aborted / stream
// cancelled), the access check failing, or the client falling too far behind.
import type { LiveMessage, LiveSink } from "./live-hub";
import { sseComment, sseEvent, sseRetry } from "./sse-format";
import { SSE_EVENT, type LiveServerStatus } from "./wire";

export interface EventStreamOptions {
  /** Registers the stream's sink; returns the unsubscribe function. */
  subscribe: (sink: LiveSink) => () => void;
  /** The request's signal: aborted when the browser disconnects. */
  signal: AbortSignal;
  /** Sent in the first (`ready`) event. */
  initialStatus: LiveServerStatus;
  heartbeatMs?: number;
  /** EventSource's own reconnect delay. */
  retryMs?: number;
  /** Resolves false when the subscriber may no longer read the company. */
  stillAuthorized?: () => Promise<boolean>;
  reauthorizeMs?: number;
  /** Queued chunks beyond which a slow client is disconnected (it reconnects and resyncs). */
  maxQueuedChunks?: number;
  /** Called once when the stream is released. */
  onClose?: (reason: EventStreamCloseReason) => void;
}

export type EventStreamCloseReason = "client_gone" | "denied" | "too_slow";

export const HEARTBEAT_MS = 15_000;
const DEFAULT_REAUTHORIZE_MS = 60_000;

export function openEventStream(options: EventStreamOptions): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const maxQueued = options.maxQueuedChunks ?? 1_000;
  let release: ((reason: EventStreamCloseReason) => void) | undefined;

  return new ReadableStream<Uint8Array>({
    start(controller) {
      let open = true;
      const timers: NodeJS.Timeout[] = [];
      let unsubscribe: () => void = () => undefined;

      const write = (text: string) => {
        if (!open) return;
        if (controller.desiredSize !== null && controller.desiredSize < -maxQueued)
          return release?.("too_slow");
        controller.enqueue(encoder.encode(text));
      };

      release = (reason) => {
        if (!open) return;
        open = false;
        unsubscribe();
        for (const timer of timers) clearInterval(timer);
        options.signal.removeEventListener("abort", onAbort);
        try {
          controller.close();
        } catch {
          // Already closed or errored by the runtime (the client is gone).
        }
        options.onClose?.(reason);
      };
      const onAbort = () => release?.("client_gone");

      if (options.signal.aborted) return release("client_gone");
      options.signal.addEventListener("abort", onAbort, { once: true });

      write(sseRetry(options.retryMs ?? 3_000));
      unsubscribe = options.subscribe((message) => write(format(message)));
      write(sseEvent(SSE_EVENT.ready, options.initialStatus));

      timers.push(
        setInterval(() => write(sseComment("keep-alive")), options.heartbeatMs ?? HEARTBEAT_MS),
      );
      const check = options.stillAuthorized;
      if (check) {
        timers.push(
          setInterval(() => {
            check().then(
              (allowed) => {
                if (allowed || !open) return;
                write(
                  sseEvent(SSE_EVENT.denied, {
                    message: "You no longer have access to this company.",
                  }),
                );
                release?.("denied");
              },
              // A failed check (database briefly unreachable) is not a denial; the next one decides.
              () => undefined,
            );
          }, options.reauthorizeMs ?? DEFAULT_REAUTHORIZE_MS),
        );
      }
    },
    cancel() {
      release?.("client_gone");
    },
  });
}

function format(message: LiveMessage): string {
  switch (message.kind) {
    case "change":
      return sseEvent(SSE_EVENT.change, message.change);
    case "resync":
      return sseEvent(SSE_EVENT.resync, {});
    case "status":
      return sseEvent(SSE_EVENT.status, message.status);
  }
}
