// Does the server behind a URL answer, and is it a PostgreSQL we support (15+, DESIGN.md §6)?
import pg from "pg";
import { describeTarget, parseDatabaseUrl, redactPassword } from "./database-url";
import { DatabaseConnectionError } from "./errors";

export const MIN_SERVER_VERSION_NUM = 150_000;

export async function probeDatabase(
  url: string,
  opts: { timeoutMs?: number } = {},
): Promise<{ serverVersionNum: number }> {
  const target = parseDatabaseUrl(url);
  const where = describeTarget(target);
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: opts.timeoutMs ?? 10_000,
  });
  // A client error after connect (server gone) must not become an uncaught exception.
  client.on("error", () => undefined);
  let versionNum: number;
  try {
    await client.connect();
    const result = await client.query<{ server_version_num: string }>("SHOW server_version_num");
    versionNum = Number(result.rows[0]?.server_version_num);
  } catch (error) {
    const reason = redactPassword(describeError(error), target.password);
    throw new DatabaseConnectionError(
      "DATABASE_UNREACHABLE",
      `Cannot connect to PostgreSQL at ${where} (from DATABASE_URL): ${reason}. Check that the server is running and DATABASE_URL is right, or unset DATABASE_URL to use the embedded database.`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
  if (!Number.isInteger(versionNum) || versionNum < MIN_SERVER_VERSION_NUM) {
    throw new DatabaseConnectionError(
      "DATABASE_VERSION_UNSUPPORTED",
      `PostgreSQL at ${where} is version ${Number.isInteger(versionNum) ? Math.floor(versionNum / 10_000) : "unknown"}; Copyback needs PostgreSQL 15 or newer.`,
    );
  }
  return { serverVersionNum: versionNum };
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0)
    return error.errors.map(describeError).join("; ");
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return error.message || code || error.name;
  }
  return String(error);
}
