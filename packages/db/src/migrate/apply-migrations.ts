// Applies pending migrations of prisma/migrations — what `prisma migrate deploy` does — through
// the WASM schema engine, which writes `_prisma_migrations` exactly as the native engine does
// (same table, sha256 checksums, one row per migration). Called by the test harness, the
// launcher and the worker, often at the same moment, so it is:
//   - fast when there is nothing to do: one query on one connection, no wasm loaded;
//   - serialized across processes and hosts by a session advisory lock, rechecked under the
//     lock, so concurrent callers apply each migration once and the others return `[]`;
//   - atomic per migration: the engine sends each migration.sql as one multi-statement
//     simple query, which PostgreSQL runs as one implicit transaction.
import pg from "pg";
import { MIGRATIONS_DIR } from "../schema/paths";
import { readMigrationsDirectory, type MigrationsDirectory } from "./migrations-directory";
import { NO_SCHEMA_FILTER, withSchemaEngine } from "./wasm-schema-engine";
import { MigrationError } from "./errors";

export interface ApplyMigrationsOptions {
  /** Defaults to this package's prisma/migrations. */
  migrationsDir?: string;
  /** How long to wait for another process that is applying migrations (default 5 minutes). */
  lockTimeoutMs?: number;
}

// Not Prisma's own key (72707369): the engine takes that one itself, on another connection.
const APPLY_LOCK_KEY = "copyback:apply-migrations";
const LOCK_NOT_AVAILABLE = "55P03"; // lock_timeout expired

export async function applyMigrations(
  databaseUrl: string,
  options: ApplyMigrationsOptions = {},
): Promise<{ applied: string[] }> {
  const directory = await readMigrationsDirectory(options.migrationsDir ?? MIGRATIONS_DIR);
  if (directory.migrations.length === 0) {
    throw new MigrationError("migrations_missing", `No migration in ${directory.dir}`);
  }
  const client = new pg.Client({
    connectionString: databaseUrl,
    application_name: "copyback-migrate",
  });
  await client.connect();
  try {
    if (await isUpToDate(client, directory)) return { applied: [] };
    const lockTimeoutMs = Math.max(1, Math.trunc(options.lockTimeoutMs ?? 300_000));
    await client.query(`SET lock_timeout = ${lockTimeoutMs}`);
    await client
      .query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [APPLY_LOCK_KEY])
      .catch((error: unknown) => {
        if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE) throw error;
        throw new MigrationError(
          "migration_lock_timeout",
          `Another process has been applying migrations for more than ${lockTimeoutMs} ms; try again when it finishes.`,
          { cause: error },
        );
      });
    try {
      if (await isUpToDate(client, directory)) return { applied: [] };
      const output = await withSchemaEngine({ databaseUrl }, (engine) =>
        engine.applyMigrations({ migrationsList: directory.list, filters: NO_SCHEMA_FILTER }),
      );
      return { applied: output.appliedMigrationNames };
    } finally {
      await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [APPLY_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

/**
 * True when every local migration has a finished, not rolled back row and no migration is
 * left in a failed state. Anything else goes to the engine, which applies what is pending or
 * reports the failed migration the way `migrate deploy` does.
 */
async function isUpToDate(client: pg.Client, directory: MigrationsDirectory): Promise<boolean> {
  const table = await client.query<{ exists: boolean }>(
    "SELECT to_regclass('_prisma_migrations') IS NOT NULL AS exists",
  );
  if (!table.rows[0]?.exists) return false;
  const rows = await client.query<{ migration_name: string; finished: boolean }>(
    "SELECT migration_name, finished_at IS NOT NULL AS finished FROM _prisma_migrations WHERE rolled_back_at IS NULL",
  );
  if (rows.rows.some((row) => !row.finished)) return false;
  const applied = new Set(rows.rows.map((row) => row.migration_name));
  return directory.migrations.every((migration) => applied.has(migration.name));
}
