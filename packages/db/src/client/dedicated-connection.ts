// A single connection outside every pool. The copyback owner holds its advisory xact lock on
// one of these for the whole physical copyback, so that even a one-connection application pool
// still serves progress writes meanwhile (R-OWN-6). It is the caller's to close (`end()`).
import pg from "pg";

/** A pg client outside any pool (node-postgres `Client`). */
export type DedicatedConnection = pg.Client;

export interface DedicatedConnectionOptions {
  applicationName?: string;
}

export async function openDedicatedConnection(
  databaseUrl: string,
  options: DedicatedConnectionOptions = {},
): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: options.applicationName ?? "copyback-dedicated",
  });
  // An idle pg.Client whose socket dies emits 'error'; with no listener that would crash the
  // process. Losing this connection must not crash the controller: it is detected where it
  // matters, because publication re-checks the lock connection with a query (R-OWN-8, R-OWN-9).
  client.on("error", () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}
