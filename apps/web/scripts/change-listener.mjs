// The render cache's own LISTEN connection (render-cache.mjs): every notification on
// `copyback_events` drops what it may have changed; losing the connection drops it and stops caching until the
// connection is back (it reconnects after 1 s, doubling up to 16 s). `fence()` is the query that
// makes a hit safe to serve: notifications committed before it was sent arrive ahead of its
// answer (see render-cache.mjs). Separate from the app's live feed (src/server/live) because this
// runs outside the Next.js bundle, in the server that wraps it.
import pg from "pg";

export const CHANNEL = "copyback_events";
const RETRY_MS = { first: 1000, max: 16_000 };

/**
 * @param {{ databaseUrl: string; cache: import("./render-cache.mjs").RenderCache; log?: (line: string) => void; retryMs?: { first: number; max: number } }} options
 */
export function startChangeListener({ databaseUrl, cache, log = (line) => console.error(line), retryMs: retry = RETRY_MS }) {
  /** @type {pg.Client | null} */
  let client = null;
  let stopped = false;
  let retryMs = retry.first;
  /** @type {NodeJS.Timeout | null} */
  let retryTimer = null;
  // Hits waiting for a fence; one round trip answers all who were waiting when it was sent.
  /** @type {((ok: boolean) => void)[]} */
  let waiting = [];
  let sending = false;

  const lost = (connection, reason) => {
    if (client !== connection) return;
    client = null;
    cache.setListening(false);
    connection.removeAllListeners("notification");
    connection.end().catch(() => {});
    if (stopped) return;
    log(`[copyback web] render cache: LISTEN connection lost (${reason}); retrying in ${retryMs} ms`);
    retryTimer = setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, retry.max);
  };

  async function connect() {
    retryTimer = null;
    const connection = new pg.Client({ connectionString: databaseUrl, application_name: "copyback-web-render-cache" });
    client = connection;
    connection.on("notification", (message) => cache.applyNotification(message.payload));
    connection.on("error", (error) => lost(connection, error.message));
    connection.on("end", () => lost(connection, "closed"));
    try {
      await connection.connect();
      await connection.query(`LISTEN ${CHANNEL}`);
      if (client !== connection) return;
      retryMs = retry.first;
      // Anything before LISTEN took effect was not heard: start from nothing.
      cache.setListening(true);
    } catch (error) {
      lost(connection, error instanceof Error ? error.message : String(error));
    }
  }

  /** One round trip on the LISTEN connection; false if there is none or it failed. */
  const roundTrip = async () => {
    const connection = client;
    if (!connection || !cache.listening) return false;
    try {
      await connection.query("SELECT 1");
      return client === connection && cache.listening;
    } catch {
      return false;
    }
  };

  async function sendFences() {
    sending = true;
    while (waiting.length > 0) {
      // Everyone in this batch arrived before its query is sent.
      const batch = waiting;
      waiting = [];
      const ok = await roundTrip();
      for (const resolve of batch) resolve(ok);
    }
    sending = false;
  }

  /**
   * Resolves true once every notification committed before this call has been applied to the
   * cache; false when that cannot be known (no connection): the caller renders instead.
   * @returns {Promise<boolean>}
   */
  function fence() {
    return new Promise((resolve) => {
      waiting.push(resolve);
      if (!sending) void sendFences();
    });
  }

  void connect();
  return {
    fence,
    async stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      const connection = client;
      client = null;
      cache.setListening(false);
      if (connection) await connection.end().catch(() => {});
    },
  };
}
