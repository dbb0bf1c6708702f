// The browser end of /api/events, free of React so it can be tested with a fake EventSource.
// EventSource reconnects by itself after a dropped stream; it gives up for good after an HTTP
// error (readyState CLOSED), so then we reopen it ourselves, with backoff. Every (re)connection
// after the first means changes may have been missed meanwhile: the owner re-reads everything.
import { SSE_EVENT, parseLiveChange, type LiveChange } from "~/server/live/wire";

export type LiveConnectionStatus =
  /** Opening the stream for the first time. */
  | "connecting"
  /** Changes arrive as they happen. */
  | "live"
  /** Connected, but the server cannot hear the database right now; a resync follows. */
  | "delayed"
  /** The stream dropped; reconnecting. */
  | "reconnecting"
  /** Closed while the page is in the background; reopens (and re-reads) when it is visible. */
  | "paused"
  /** Closed for good: access was withdrawn, or the page left. */
  | "stopped";

export interface LiveConnectionHandlers {
  onChange: (change: LiveChange) => void;
  /** Re-read everything: after a reconnect, or when the server says it missed changes. */
  onResync: () => void;
  onStatus: (status: LiveConnectionStatus) => void;
}

/** The part of EventSource this uses (the DOM type, narrowed for fakes). */
export interface EventSourceLike {
  readonly readyState: number;
  addEventListener(type: string, listener: (event: MessageEvent<string>) => void): void;
  close(): void;
}

export interface LiveConnectionOptions {
  createEventSource?: (url: string) => EventSourceLike;
  /** Delay before reopening after EventSource gave up (attempt counts from 0). */
  reopenDelayMs?: (attempt: number) => number;
  /** Re-read everything on the first `ready` too (this connection replaces a closed one). */
  resyncOnFirstReady?: boolean;
}

export interface LiveConnection {
  close(): void;
}

const CLOSED = 2; // EventSource.CLOSED

export function defaultReopenDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(60_000, 1_000 * 2 ** Math.min(attempt, 16));
  return Math.round(base / 2 + (random() * base) / 2);
}

export function connectLiveEvents(
  url: string,
  handlers: LiveConnectionHandlers,
  options: LiveConnectionOptions = {},
): LiveConnection {
  const create = options.createEventSource ?? ((target: string) => new EventSource(target));
  const reopenDelay = options.reopenDelayMs ?? defaultReopenDelayMs;
  let source: EventSourceLike | undefined;
  let reopenTimer: ReturnType<typeof setTimeout> | undefined;
  let attempts = 0;
  let connectedBefore = options.resyncOnFirstReady ?? false;
  let stopped = false;
  let status: LiveConnectionStatus | undefined;

  const setStatus = (next: LiveConnectionStatus) => {
    if (next === status) return;
    status = next;
    handlers.onStatus(next);
  };

  const open = () => {
    if (stopped) return;
    const current = create(url);
    source = current;
    current.addEventListener(SSE_EVENT.ready, (event) => {
      attempts = 0;
      if (connectedBefore) handlers.onResync();
      connectedBefore = true;
      setStatus(readListening(event.data) === false ? "delayed" : "live");
    });
    current.addEventListener(SSE_EVENT.change, (event) => {
      const change = parseLiveChange(event.data);
      if (change) handlers.onChange(change);
    });
    current.addEventListener(SSE_EVENT.resync, () => handlers.onResync());
    current.addEventListener(SSE_EVENT.status, (event) => {
      const listening = readListening(event.data);
      if (listening !== undefined) setStatus(listening ? "live" : "delayed");
    });
    current.addEventListener(SSE_EVENT.denied, () => {
      // Close before the stream ends, or EventSource would reconnect on its own.
      stop();
    });
    current.addEventListener("error", () => {
      if (stopped || source !== current) return;
      setStatus(status === "connecting" ? "connecting" : "reconnecting");
      if (current.readyState !== CLOSED) return; // EventSource retries by itself
      current.close();
      reopenTimer = setTimeout(open, reopenDelay(attempts++));
    });
  };

  const stop = () => {
    if (stopped) return;
    stopped = true;
    clearTimeout(reopenTimer);
    source?.close();
    setStatus("stopped");
  };

  setStatus("connecting");
  open();
  return { close: stop };
}

function readListening(data: string): boolean | undefined {
  try {
    const value = JSON.parse(data) as { listening?: unknown };
    return typeof value.listening === "boolean" ? value.listening : undefined;
  } catch {
    return undefined;
  }
}
