// Reading a database URL without ever echoing its password.
import { DatabaseConnectionError } from "./errors";

export interface DatabaseTarget {
  host: string;
  port: number;
  database: string;
  user: string;
  /** Decoded password, or "" when the URL has none. */
  password: string;
}

export function parseDatabaseUrl(url: string): DatabaseTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The raw text may be a password-bearing URL with a typo: do not repeat it.
    throw new DatabaseConnectionError(
      "DATABASE_URL_INVALID",
      "DATABASE_URL is not a valid URL (expected postgresql://user:password@host:port/database).",
    );
  }
  if (parsed.protocol !== "postgresql:" && parsed.protocol !== "postgres:") {
    throw new DatabaseConnectionError(
      "DATABASE_URL_INVALID",
      `DATABASE_URL must start with postgresql:// (got ${parsed.protocol}//).`,
    );
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
  return {
    host: parsed.hostname.replace(/^\[(.*)\]$/, "$1") || "localhost",
    port: parsed.port ? Number(parsed.port) : 5432,
    database: database || decodeURIComponent(parsed.username) || "postgres",
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
  };
}

/** "user@host:port/database": what to show in messages and logs. */
export function describeTarget(target: DatabaseTarget): string {
  const host = target.host.includes(":") ? `[${target.host}]` : target.host;
  return `${target.user ? `${target.user}@` : ""}${host}:${target.port}/${target.database}`;
}

/** Removes the password (raw and URL-encoded) from a text that may quote it. */
export function redactPassword(text: string, password: string): string {
  if (!password) return text;
  let out = text;
  for (const form of new Set([password, encodeURIComponent(password)]))
    out = out.split(form).join("***");
  return out;
}
