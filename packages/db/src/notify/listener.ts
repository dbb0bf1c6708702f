// One LISTEN connection that stays up: a dedicated connection (outside every pool, because a
// pooled connection would be handed to other queries and its LISTEN lost), reopened with
// backoff whenever it drops, LISTENing again on each new connection.
//
// PostgreSQL delivers a notification only to sessions listening at commit time: whatever was
// sent while the connection was down is gone. `onListening({ resumed: true })` tells the owner
// so, and it should have its consumers re-read what they show.
import type pg from "pg";
import { openDedicatedConnection } from "../client/dedicated-connection";
import { abortableDelay, whenAborted, withTimeout } from "./abortable";
import { reconnectDelayMs, type BackoffOptions } from "./backoff";

export type ListenerState = "connecting" | "listening" | "reconnecting" | "stopped";

export interface NotificationListenerOptions {
  databaseUrl: string;
  /** Channel names (identifiers; quoted as such). At least one. */
  channels: readonly string[];
  /** Called for each notification on one of `channels`, in commit order. Must not block. */
  onNotification: (channel: string, payload: string) => void;
  /** Called each time LISTEN is in place; `resumed` after a reconnect (notifications were lost meanwhile). */
  onListening?: (info: { resumed: boolean; backendPid: number }) => void;
  onStateChange?: (state: ListenerState, error?: Error) => void;
  /** Called when `onNotification` throws; the listener carries on. Default: console.error. */
  onHandlerError?: (error: unknown) => void;
  applicationName?: string;
  backoff?: BackoffOptions;
  /** An idle connection is probed this often (default 30 s): a dead socket can look idle forever. */
  probeIntervalMs?: number;
  /** A probe or connection attempt slower than this counts as a lost connection (default 10 s). */
  timeoutMs?: number;
  /** How to open a connection (tests inject failures); default `openDedicatedConnection`. */
  connect?: (databaseUrl: string, applicationName: string) => Promise<pg.Client>;
}

export interface NotificationListener {
  readonly state: ListenerState;
  /** Resolves once LISTEN is first in place; rejects if the listener is stopped before that. */
  ready(): Promise<void>;
  /** The server process id of the current LISTEN connection (for diagnostics and tests). */
  backendPid(): number | undefined;
  /** Closes the connection and stops reconnecting. Idempotent. */
  stop(): Promise<void>;
}

export function startNotificationListener(
  options: NotificationListenerOptions,
): NotificationListener {
  if (options.channels.length === 0)
    throw new RangeError("startNotificationListener needs at least one channel");
  return new LongLivedListener(options);
}

const defaultConnect = (databaseUrl: string, applicationName: string) =>
  openDedicatedConnection(databaseUrl, { applicationName });

class LongLivedListener implements NotificationListener {
  state: ListenerState = "connecting";
  private readonly stopping = new AbortController();
  private readonly loop: Promise<void>;
  private readonly readyPromise: Promise<void>;
  private settleReady!: (error?: Error) => void;
  private pid: number | undefined;

  constructor(private readonly options: NotificationListenerOptions) {
    this.readyPromise = new Promise<void>((resolve, reject) => {
      let settled = false;
      this.settleReady = (error) => {
        if (settled) return;
        settled = true;
        if (error) reject(error);
        else resolve();
      };
    });
    this.readyPromise.catch(() => undefined); // nobody has to ask
    this.loop = this.run();
  }

  ready(): Promise<void> {
    return this.readyPromise;
  }

  backendPid(): number | undefined {
    return this.pid;
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }

  private setState(state: ListenerState, error?: Error) {
    this.state = state;
    this.options.onStateChange?.(state, error);
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    let attempt = 0;
    let listenedBefore = false;
    while (!signal.aborted) {
      let failure: Error | undefined;
      try {
        await this.session(listenedBefore, () => {
          attempt = 0;
          listenedBefore = true;
        });
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
      }
      if (signal.aborted) break;
      this.setState("reconnecting", failure);
      await abortableDelay(reconnectDelayMs(attempt++, this.options.backoff), signal);
    }
    this.setState("stopped");
    this.settleReady(new Error("The notification listener was stopped before it was listening."));
  }

  /** One connection's life: connect, LISTEN, then wait until it is lost or the listener stops. */
  private async session(resumed: boolean, onListening: () => void): Promise<void> {
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    const connect = this.options.connect ?? defaultConnect;
    const pending = connect(
      this.options.databaseUrl,
      this.options.applicationName ?? "copyback-listen",
    );
    const client = await withTimeout(
      pending,
      timeoutMs,
      "Timed out opening the LISTEN connection",
    ).catch((error: unknown) => {
      // A connection that arrives after its timeout must not leak.
      pending.then((late) => late.end()).catch(() => undefined);
      throw error;
    });
    const sessionEnd = new AbortController();
    try {
      const lost = new Promise<never>((_, reject) => {
        client.on("error", (error: Error) => reject(error));
        client.on("end", () => reject(new Error("The LISTEN connection closed")));
      });
      lost.catch(() => undefined);
      client.on("notification", (message) => this.deliver(message.channel, message.payload));

      for (const channel of this.options.channels) {
        await Promise.race([client.query(`LISTEN ${client.escapeIdentifier(channel)}`), lost]);
      }
      const pidResult = await Promise.race([
        client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"),
        lost,
      ]);
      const backendPid = pidResult.rows[0]?.pid ?? -1;
      this.pid = backendPid;
      onListening();
      this.setState("listening");
      this.settleReady();
      this.options.onListening?.({ resumed, backendPid });

      await Promise.race([
        lost,
        whenAborted(this.stopping.signal),
        this.probe(client, sessionEnd.signal, timeoutMs),
      ]);
    } finally {
      sessionEnd.abort();
      this.pid = undefined;
      client.removeAllListeners("notification");
      // end() can wait forever on a dead socket; the socket is dropped either way.
      await withTimeout(client.end(), 1_000, "end").catch(() => undefined);
    }
  }

  /** Rejects when a `SELECT 1` fails or takes too long; never resolves otherwise. */
  private async probe(client: pg.Client, signal: AbortSignal, timeoutMs: number): Promise<never> {
    const interval = this.options.probeIntervalMs ?? 30_000;
    for (;;) {
      await abortableDelay(interval, signal);
      if (signal.aborted) return new Promise<never>(() => undefined);
      await withTimeout(
        client.query("SELECT 1"),
        timeoutMs,
        "The LISTEN connection stopped answering",
      );
    }
  }

  private deliver(channel: string, payload: string | undefined) {
    if (!this.options.channels.includes(channel)) return;
    try {
      this.options.onNotification(channel, payload ?? "");
    } catch (error) {
      // One consumer's bug must not take live updates down for everyone.
      (
        this.options.onHandlerError ??
        ((e: unknown) => console.error("[copyback listen] notification handler failed", e))
      )(error);
    }
  }
}
