// The database of the `recovery` commands: the server named by DATABASE_URL, else the embedded
// PostgreSQL of the instance root (DESIGN.md section 6), as `resolveDatabase` picks it for the
// launcher. One difference, on purpose: the CLI connects to a RUNNING embedded cluster and never
// starts it. Only one postmaster may run on a data directory; the launcher that started it owns
// it (stops it on exit), and the CLI is mostly run while the instance is up. So a stopped cluster
// is an environment error (exit 3) that says how to start it. Migrations are never applied here.
import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  APP_DATABASE,
  DatabaseConnectionError,
  embeddedPortFrom,
  instanceLayout,
  isEmbeddedPostgresError,
  probeDatabase,
} from "@copyback/db";
import { createPrismaClient, type PrismaClient } from "@copyback/db/client";
import { z } from "zod";
import { messageOf } from "../errors";
import type { CliEnv } from "./env";
import { CliError } from "./errors";
import { EXIT } from "./exit-codes";

export interface CliDatabase {
  prisma: PrismaClient;
  /** "DATABASE_URL (host:port/db)" or "the embedded database of <root> (127.0.0.1:port)". */
  source: string;
}

/** Opens the database, runs `fn`, and always disconnects. */
export async function withCliDatabase<T>(
  ctx: { home: string; env: CliEnv },
  fn: (db: CliDatabase) => Promise<T>,
): Promise<T> {
  const db = await openCliDatabase(ctx);
  try {
    return await fn(db);
  } finally {
    await db.prisma.$disconnect();
  }
}

async function openCliDatabase(ctx: { home: string; env: CliEnv }): Promise<CliDatabase> {
  if (ctx.env.databaseUrl !== undefined) {
    try {
      // probeDatabase's messages name the target without its password and say what to check.
      await probeDatabase(ctx.env.databaseUrl, { timeoutMs: 10_000 });
    } catch (error) {
      if (error instanceof DatabaseConnectionError)
        throw new CliError(EXIT.environment, error.code.toLowerCase(), error.message);
      throw error;
    }
    const target = new URL(ctx.env.databaseUrl);
    return {
      prisma: client(ctx.env.databaseUrl),
      source: `DATABASE_URL (${target.hostname}:${target.port || 5432}${target.pathname})`,
    };
  }
  return openEmbedded(ctx.home, ctx.env);
}

const credentialsSchema = z.object({ user: z.string().min(1), password: z.string().min(1) });

async function openEmbedded(home: string, env: CliEnv): Promise<CliDatabase> {
  const layout = instanceLayout(home);
  const noDatabase = (why: string) =>
    new CliError(
      EXIT.environment,
      "embedded_database_missing",
      `No embedded database in the instance root ${home} (${why}). Set DATABASE_URL, or point --home / COPYBACK_HOME at the instance root Copyback runs with.`,
    );
  let credentialsText: string;
  try {
    credentialsText = await readFile(layout.credentialsFile, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT") throw noDatabase(`${layout.credentialsFile} does not exist`);
    throw new CliError(
      EXIT.environment,
      "embedded_credentials_unreadable",
      `Cannot read the embedded database's password file ${layout.credentialsFile} (${String(code ?? error)}): run the CLI as the user Copyback runs as, or set DATABASE_URL.`,
    );
  }
  const credentials = credentialsSchema.safeParse(safeJson(credentialsText));
  if (!credentials.success) throw noDatabase(`${layout.credentialsFile} is not valid`);

  const port = (await runningPort(layout.dataDir)) ?? configuredPort(env);
  const url = new URL("postgresql://127.0.0.1");
  url.username = encodeURIComponent(credentials.data.user);
  url.password = encodeURIComponent(credentials.data.password);
  url.port = String(port);
  url.pathname = `/${APP_DATABASE}`;
  const prisma = client(url.toString());
  try {
    await prisma.$queryRaw`SELECT 1`;
  } catch (error) {
    await prisma.$disconnect().catch(() => undefined);
    const kind = driverErrorKind(error);
    if (kind === "DatabaseNotReachable") {
      throw new CliError(
        EXIT.environment,
        "embedded_database_not_running",
        `The embedded PostgreSQL of the instance root ${home} is not running (nothing answers on 127.0.0.1:${port}). ` +
          "The CLI connects to the running cluster and never starts it (the process that starts it owns it): start Copyback (`npm start`) and run the command again, or set DATABASE_URL.",
      );
    }
    throw new CliError(
      EXIT.environment,
      "embedded_database_unreachable",
      `Cannot use the embedded PostgreSQL of the instance root ${home} on 127.0.0.1:${port} (${kind ?? messageOf(error)}). ` +
        "Another instance may listen on that port (COPYBACK_DB_PORT), or set DATABASE_URL.",
    );
  }
  return { prisma, source: `the embedded database of ${home} (127.0.0.1:${port})` };
}

/** The port of the server that runs on the data directory: postmaster.pid, line 4. */
async function runningPort(dataDir: string): Promise<number | null> {
  try {
    const line = (await readFile(path.join(dataDir, "postmaster.pid"), "utf8")).split("\n")[3];
    const port = Number.parseInt(line ?? "", 10);
    return Number.isInteger(port) && port > 0 ? port : null;
  } catch {
    // Not running (no pid file), or a data directory this user cannot read: the configured port.
    return null;
  }
}

function configuredPort(env: CliEnv): number {
  try {
    return embeddedPortFrom({ COPYBACK_DB_PORT: env.embeddedPort });
  } catch (error) {
    if (isEmbeddedPostgresError(error, "INVALID_PORT"))
      throw new CliError(EXIT.usage, "invalid_port", error.message);
    throw error;
  }
}

function client(databaseUrl: string): PrismaClient {
  return createPrismaClient({ databaseUrl, poolSize: 2, applicationName: "copyback-cli" });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/** adapter-pg's classification of a failed connection ("DatabaseNotReachable", ...). */
function driverErrorKind(error: unknown): string | undefined {
  const meta = (error as { meta?: { driverAdapterError?: { cause?: { kind?: unknown } } } }).meta;
  const kind = meta?.driverAdapterError?.cause?.kind;
  return typeof kind === "string" ? kind : undefined;
}
