// A throwaway database on the same server, for `migration:create` (which replays the existing
// migrations there before diffing). Dropped with FORCE so a leaked connection cannot keep it.
import { randomBytes } from "node:crypto";
import pg from "pg";

export interface TemporaryDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

export function databaseUrlFor(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

export async function createTemporaryDatabase(
  serverUrl: string,
  prefix: string,
): Promise<TemporaryDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  await withAdmin(serverUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  let dropped = false;
  return {
    name,
    url: databaseUrlFor(serverUrl, name),
    drop: async () => {
      if (dropped) return;
      dropped = true;
      await withAdmin(serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      );
    },
  };
}

async function withAdmin<T>(
  serverUrl: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({
    connectionString: serverUrl,
    application_name: "copyback-migrate",
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
