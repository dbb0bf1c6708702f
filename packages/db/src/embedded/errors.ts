// Every failure of the embedded server carries a stable `code` so callers (the launcher, the
// test harness) can branch on it, and a message that says what to do next.
export type EmbeddedPostgresErrorCode =
  | "INVALID_PORT" // the configured port cannot be used (out of range, or the system server's 5432)
  | "PORT_IN_USE" // another program listens on the port
  | "ALREADY_RUNNING" // a live server already owns this data directory
  | "STALE_SERVER_PROCESSES" // leftover server processes of a crashed postmaster still use the data directory
  | "INCOMPATIBLE_DATA_DIR" // the data directory was made by another PostgreSQL major version
  | "INVALID_DATA_DIR" // the data directory exists but is not a PostgreSQL cluster
  | "CREDENTIALS_MISSING" // the cluster exists but its credentials.json is gone or unreadable
  | "NOT_ACCESSIBLE" // the server's OS user cannot reach the data directory or the binaries
  | "SERVER_USER_MISSING" // running as root and no unprivileged user could be found or created
  | "BINARIES_MISSING" // the platform package with the PostgreSQL binaries is not installed
  | "INIT_FAILED" // initdb failed
  | "START_FAILED" // the server exited or never became ready
  | "BOOTSTRAP_FAILED"; // the server runs but the application database could not be created

export class EmbeddedPostgresError extends Error {
  override readonly name = "EmbeddedPostgresError";
  readonly code: EmbeddedPostgresErrorCode;

  constructor(code: EmbeddedPostgresErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isEmbeddedPostgresError(
  error: unknown,
  code?: EmbeddedPostgresErrorCode,
): error is EmbeddedPostgresError {
  return error instanceof EmbeddedPostgresError && (code === undefined || error.code === code);
}
