// One answer to "which PostgreSQL do we use": the server named by DATABASE_URL when given (any
// PostgreSQL 15+, possibly shared by many processes), else the embedded one under the instance
// root (DESIGN.md §6).
import { startEmbeddedPostgres } from "../embedded/start";
import { superviseEmbeddedPostgres } from "../embedded/supervise";
import { applyMigrations } from "../migrate/apply-migrations";
import { probeDatabase } from "./probe-database";

export interface ResolveDatabaseOptions {
  /** An existing server; when absent the embedded server is started. */
  databaseUrl?: string;
  /** Holds the embedded cluster (`<instanceRoot>/postgres`). */
  instanceRoot: string;
  /** Embedded server port (default 54329). Ignored with databaseUrl. */
  port?: number;
  /**
   * Apply pending migrations. Default: true for the embedded server (it is ours), false for a
   * databaseUrl (a shared server is migrated deliberately, by one deploy step).
   */
  migrate?: boolean;
  log?: (line: string) => void;
  /**
   * Keep the embedded server running: when it dies it is restarted with backoff (supervise.ts),
   * and each restart is reported here in one line. Ignored with databaseUrl.
   */
  supervise?: (line: string) => void;
}

export interface ResolvedDatabase {
  url: string;
  embedded: boolean;
  /** Stops the embedded server (fast shutdown); nothing for a databaseUrl. Idempotent. */
  stop(): Promise<void>;
}

export async function resolveDatabase(options: ResolveDatabaseOptions): Promise<ResolvedDatabase> {
  if (options.databaseUrl !== undefined && options.databaseUrl.trim() !== "") {
    const url = options.databaseUrl.trim();
    await probeDatabase(url);
    if (options.migrate === true) await applyMigrations(url);
    return { url, embedded: false, stop: async () => undefined };
  }
  const startOptions = {
    instanceRoot: options.instanceRoot,
    ...(options.port !== undefined ? { port: options.port } : {}),
    ...(options.log ? { log: options.log } : {}),
  };
  const server = options.supervise
    ? await superviseEmbeddedPostgres({ ...startOptions, onEvent: options.supervise })
    : await startEmbeddedPostgres(startOptions);
  try {
    if (options.migrate !== false) await applyMigrations(server.url);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { url: server.url, embedded: true, stop: server.stop };
}
