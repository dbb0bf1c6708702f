// Where the embedded server keeps its files under an instance root, and the fixed names it uses.
import path from "node:path";
import { EmbeddedPostgresError } from "./errors";

/** Default port: far from the system PostgreSQL's 5432 so the two never collide. */
export const DEFAULT_EMBEDDED_PORT = 54329;
/** The standard PostgreSQL port, left to a system server (this machine runs PostgreSQL 15 there). */
export const SYSTEM_POSTGRES_PORT = 5432;
/** The database the application uses; created on first start. */
export const APP_DATABASE = "copyback";
/** The cluster's superuser (initdb `--username`). */
export const SUPERUSER = "postgres";
/** The only address the server listens on: nothing beyond this machine can reach it. */
export const LISTEN_HOST = "127.0.0.1";

export interface InstanceLayout {
  instanceRoot: string;
  /** `<instanceRoot>/postgres`: everything the embedded server owns. */
  postgresDir: string;
  /** `<instanceRoot>/postgres/data`: the cluster (PGDATA). */
  dataDir: string;
  /** `<instanceRoot>/postgres/credentials.json`: the superuser password, mode 0600. */
  credentialsFile: string;
}

export function instanceLayout(instanceRoot: string): InstanceLayout {
  const root = path.resolve(instanceRoot);
  const postgresDir = path.join(root, "postgres");
  return {
    instanceRoot: root,
    postgresDir,
    dataDir: path.join(postgresDir, "data"),
    credentialsFile: path.join(postgresDir, "credentials.json"),
  };
}

export function validatePort(port: number): number {
  if (!Number.isInteger(port) || port < 1024 || port > 65_535) {
    throw new EmbeddedPostgresError(
      "INVALID_PORT",
      `Invalid embedded PostgreSQL port ${String(port)}: use an integer between 1024 and 65535 (set COPYBACK_DB_PORT).`,
    );
  }
  if (port === SYSTEM_POSTGRES_PORT) {
    // A system server usually owns 5432; an embedded server there would be mistaken for it
    // (or shadow it when it is down), so the embedded server never takes that port.
    throw new EmbeddedPostgresError(
      "INVALID_PORT",
      `Port ${SYSTEM_POSTGRES_PORT} is reserved for a system PostgreSQL; the embedded server never uses it. Set COPYBACK_DB_PORT to another port (default ${DEFAULT_EMBEDDED_PORT}).`,
    );
  }
  return port;
}

export function connectionUrl(parts: {
  user: string;
  password: string;
  port: number;
  database: string;
}): string {
  const url = new URL(`postgresql://${LISTEN_HOST}`);
  url.username = encodeURIComponent(parts.user);
  url.password = encodeURIComponent(parts.password);
  url.port = String(parts.port);
  url.pathname = `/${encodeURIComponent(parts.database)}`;
  return url.toString();
}
