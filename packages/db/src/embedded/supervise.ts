// The launcher's embedded PostgreSQL under supervision: when the postmaster dies (a crash, the
// OOM killer, kill -9), it is started again on the same data directory, port and password, with
// backoff, and each restart is said in one line. The start path is the ordinary one
// (startEmbeddedPostgres), so a stale postmaster.pid and backends still draining from the dead
// postmaster are handled exactly as at start (live-server.ts), and WAL recovery does the rest.
// Clients keep their URL: web and worker pools reconnect on their own once it answers again.
import { startEmbeddedPostgres, type EmbeddedDatabase, type StartEmbeddedPostgresOptions } from "./start";

export interface RestartBackoff {
  /** First wait after a death (default 250 ms). */
  initialMs: number;
  /** Upper bound (default 30 s). */
  maxMs: number;
  /** A server that stayed up this long starts the next count from the first wait again (default 60 s). */
  resetAfterMs: number;
}

export const DEFAULT_RESTART_BACKOFF: RestartBackoff = { initialMs: 250, maxMs: 30_000, resetAfterMs: 60_000 };

/** Pure: the wait before restart attempt `attempt` (1-based): doubling from initialMs, capped. */
export function restartDelayMs(attempt: number, backoff: RestartBackoff = DEFAULT_RESTART_BACKOFF): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`restartDelayMs: attempt must be a positive integer (got ${attempt})`);
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt - 1, 30));
}

/** Pure: how a postmaster ended, for the one line. */
export function describeExit(exit: { code: number | null; signal: NodeJS.Signals | null }): string {
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code ?? "?"}`;
}

export interface SupervisedDatabase {
  url: string;
  port: number;
  dataDir: string;
  /** The current postmaster's PID (changes with each restart). */
  pid(): number;
  /** How many times the server was restarted after dying. */
  restarts(): number;
  /** Resolves once a server answers again after the latest death (at once while one runs). */
  running(): Promise<void>;
  /** Stops supervising, then stops the server (fast shutdown). Idempotent. */
  stop(): Promise<void>;
}

export interface SuperviseOptions extends StartEmbeddedPostgresOptions {
  /** One line per event: a death and its restart, or a failed restart attempt. */
  onEvent: (line: string) => void;
  backoff?: Partial<RestartBackoff>;
}

export async function superviseEmbeddedPostgres(options: SuperviseOptions): Promise<SupervisedDatabase> {
  const { onEvent, backoff: backoffOverrides, ...startOptions } = options;
  const backoff = { ...DEFAULT_RESTART_BACKOFF, ...backoffOverrides };
  let current: EmbeddedDatabase = await startEmbeddedPostgres(startOptions);
  let startedAt = Date.now();
  let restarts = 0;
  let stopping = false;
  let wake: (() => void) | undefined;
  let recovered: Promise<void> = Promise.resolve();

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  const watch = (server: EmbeddedDatabase): void => {
    void server.exited.then(async (exit) => {
      if (exit.requested || stopping) return;
      let resolveRecovered: () => void = () => undefined;
      recovered = new Promise<void>((resolve) => (resolveRecovered = resolve));
      const diedAt = Date.now();
      const upFor = diedAt - startedAt;
      for (let attempt = 1; !stopping; attempt++) {
        // A server that had been up a while is restarted quickly; one that keeps dying waits longer.
        const delay = restartDelayMs(upFor >= backoff.resetAfterMs ? attempt : attempt + restarts, backoff);
        await sleep(delay);
        if (stopping) break;
        try {
          const next = await startEmbeddedPostgres(startOptions);
          if (stopping) {
            await next.stop();
            break;
          }
          current = next;
          startedAt = Date.now();
          restarts += 1;
          onEvent(
            `embedded PostgreSQL (PID ${server.pid}) died (${describeExit(exit)}); restarted it after ${((Date.now() - diedAt) / 1000).toFixed(1)} s as PID ${next.pid} (restart ${restarts}${attempt > 1 ? `, ${attempt} attempts` : ""})`,
          );
          watch(next);
          break;
        } catch (error) {
          onEvent(
            `embedded PostgreSQL (PID ${server.pid}) died (${describeExit(exit)}); restart attempt ${attempt} failed, next in ${(restartDelayMs(attempt + 1, backoff) / 1000).toFixed(1)} s: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
          );
        }
      }
      resolveRecovered();
    });
  };
  watch(current);

  let stopped: Promise<void> | undefined;
  return {
    url: current.url,
    port: current.port,
    dataDir: current.dataDir,
    pid: () => current.pid,
    restarts: () => restarts,
    running: () => recovered,
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        wake?.();
        await recovered;
        await current.stop();
      })()),
  };
}
