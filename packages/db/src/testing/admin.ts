// Database-level operations over the admin URL. Each opens one short-lived connection to the
// admin URL's own database and closes it: nothing ever stays connected to a template.
import pg from "pg";

export async function withAdminClient<T>(
  adminUrl: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function databaseUrlFor(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${encodeURIComponent(database)}`;
  return url.toString();
}

const OBJECT_IN_USE = "55006";

export async function createDatabase(
  adminUrl: string,
  name: string,
  opts: { template: string },
): Promise<void> {
  await withAdminClient(adminUrl, async (client) => {
    const sql = `CREATE DATABASE ${client.escapeIdentifier(name)} TEMPLATE ${client.escapeIdentifier(opts.template)}`;
    // "source database is being accessed by other users": an autovacuum worker may visit the
    // template for a moment; PostgreSQL waits 5 s for it, and we try a few times more.
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(sql);
        return;
      } catch (error) {
        if ((error as { code?: string }).code !== OBJECT_IN_USE || attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      }
    }
  });
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdminClient(adminUrl, async (client) => {
    // FORCE (PostgreSQL 13+) ends sessions a test forgot to close instead of failing the drop.
    await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
  });
}
