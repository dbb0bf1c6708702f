export { applyMigrations, type ApplyMigrationsOptions } from "./apply-migrations";
export {
  createMigration,
  type CreateMigrationOptions,
  type CreateMigrationResult,
} from "./create-migration";
export { diffDatabaseToSchema, driftFromSchema } from "./schema-diff";
export { MigrationError, type MigrationErrorCode } from "./errors";
export {
  readMigrationsDirectory,
  type LocalMigration,
  type MigrationsDirectory,
} from "./migrations-directory";
