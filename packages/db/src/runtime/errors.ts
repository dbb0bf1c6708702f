// Failures to reach a PostgreSQL server given by URL. Messages name host, port, database and
// user, never the password.
export type DatabaseConnectionErrorCode =
  "DATABASE_URL_INVALID" | "DATABASE_UNREACHABLE" | "DATABASE_VERSION_UNSUPPORTED";

export class DatabaseConnectionError extends Error {
  override readonly name = "DatabaseConnectionError";
  readonly code: DatabaseConnectionErrorCode;

  constructor(code: DatabaseConnectionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}
