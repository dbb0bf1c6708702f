// The application database (`copyback`) inside the embedded cluster, created on first start.
import pg from "pg";
import type { Credentials } from "./credentials";
import { EmbeddedPostgresError } from "./errors";
import { LISTEN_HOST } from "./layout";

const DUPLICATE_DATABASE = "42P04";

export async function ensureDatabase(args: {
  credentials: Credentials;
  port: number;
  database: string;
}): Promise<void> {
  const client = new pg.Client({
    host: LISTEN_HOST,
    port: args.port,
    user: args.credentials.user,
    password: args.credentials.password,
    database: "postgres",
    connectionTimeoutMillis: 10_000,
  });
  try {
    await client.connect();
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [
      args.database,
    ]);
    if (found.rowCount === 0) {
      await client
        .query(`CREATE DATABASE ${client.escapeIdentifier(args.database)}`)
        .catch((error: { code?: string }) => {
          if (error.code !== DUPLICATE_DATABASE) throw error;
        });
    }
  } catch (error) {
    throw new EmbeddedPostgresError(
      "BOOTSTRAP_FAILED",
      `The embedded PostgreSQL started, but the database "${args.database}" could not be created: ${(error as Error).message}`,
      { cause: error },
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}
