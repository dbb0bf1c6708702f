// `migration:create`: the SQL that takes the existing migrations to schema.prisma, written as a
// new migration folder. The existing migrations are replayed on a throwaway database and the
// engine diffs that database against the schema (the WASM engine cannot diff from a URL, and
// its createMigration needs a shadow database factory it does not accept from adapter-pg).
import { MIGRATIONS_DIR } from "../schema/paths";
import { joinMigrationSteps } from "../schema/hand-written";
import { applyMigrations } from "./apply-migrations";
import {
  migrationFolderName,
  readMigrationsDirectory,
  writeMigration,
} from "./migrations-directory";
import { driftFromSchema } from "./schema-diff";
import { createTemporaryDatabase } from "./temporary-database";

export interface CreateMigrationOptions {
  /** A server the caller may create and drop databases on (any database of it). */
  serverUrl: string;
  /** [a-z0-9_]+, e.g. "add_lease_sentinel". */
  name: string;
  migrationsDir?: string;
  schemaPath?: string;
  now?: Date;
}

export type CreateMigrationResult =
  { kind: "created"; folder: string; sql: string } | { kind: "up_to_date" };

export async function createMigration(
  options: CreateMigrationOptions,
): Promise<CreateMigrationResult> {
  const migrationsDir = options.migrationsDir ?? MIGRATIONS_DIR;
  const folderName = migrationFolderName(options.name, options.now ?? new Date()); // validates the name first
  const existing = await readMigrationsDirectory(migrationsDir).catch(() => null);
  const scratch = await createTemporaryDatabase(options.serverUrl, "copyback_migration");
  try {
    if (existing && existing.migrations.length > 0)
      await applyMigrations(scratch.url, { migrationsDir });
    const steps = await driftFromSchema(scratch.url, { schemaPath: options.schemaPath });
    if (steps.length === 0) return { kind: "up_to_date" };
    const sql = joinMigrationSteps(steps);
    const folder = await writeMigration(migrationsDir, folderName, sql);
    return { kind: "created", folder, sql };
  } finally {
    await scratch.drop();
  }
}
