// Errors of the migration layer, with a stable `code` callers and tests can match.
export type MigrationErrorCode =
  | "engine_failed" // the schema engine reported an error (failed migration, connection, SQL)
  | "engine_panicked" // the wasm engine crashed; the message holds its panic text
  | "migrations_missing" // the migrations folder is absent or has no migration
  | "migration_unreadable" // a migration folder without a readable migration.sql
  | "invalid_name" // a migration name that is not [a-z0-9_]+
  | "migration_lock_timeout"; // another process held the apply lock for longer than allowed

export class MigrationError extends Error {
  override readonly name = "MigrationError";
  constructor(
    readonly code: MigrationErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static fromEngine(error: unknown): MigrationError {
    if (error instanceof MigrationError) return error;
    const text = error instanceof Error ? error.message : String(error);
    // The engine appends a Rust backtrace ("   0: schema_engine_wasm::...") that helps nobody here.
    const message = text.split(/\n\s+0: /)[0]?.trim() || text;
    return new MigrationError("engine_failed", `Schema engine: ${message}`, { cause: error });
  }
}
