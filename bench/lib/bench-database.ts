// A throwaway, migrated database for a benchmark on COPYBACK_TEST_DATABASE_URL's server (or the
// local PostgreSQL at postgresql://postgres@127.0.0.1:5432/postgres), dropped afterwards unless
// BENCH_KEEP_DATABASE=1.
import pg from "pg";
import { applyMigrations } from "@copyback/db";

export interface BenchDatabase {
  name: string;
  url: string;
  /** host:port of the server, for the figures' header. */
  server: string;
  drop(): Promise<void>;
}

export async function createBenchDatabase(label: string): Promise<BenchDatabase> {
  const adminUrl =
    process.env.COPYBACK_TEST_DATABASE_URL?.trim() ||
    "postgresql://postgres@127.0.0.1:5432/postgres";
  const name = `copyback_bench_${label}_${Date.now().toString(36)}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  const drop = async () => {
    if (process.env.BENCH_KEEP_DATABASE === "1") return;
    await admin(adminUrl, (c) =>
      c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`),
    );
  };
  try {
    await applyMigrations(url.toString());
  } catch (error) {
    await drop();
    throw error;
  }
  return { name, url: url.toString(), server: new URL(adminUrl).host, drop };
}

async function admin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
