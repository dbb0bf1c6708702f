// vitest globalSetup of the integration tier (wired in /vitest.tiers.ts for every package).
// Once per vitest run: pick the server (COPYBACK_TEST_DATABASE_URL / DATABASE_URL, else an
// embedded PostgreSQL in a temporary instance root on a free port), create a uniquely named
// template database and migrate it once. Test files then clone it (useTestDatabase), which
// takes milliseconds instead of a migration run per file. Teardown removes all of it; a setup
// that fails half-way removes what it made before rethrowing.
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startEmbeddedPostgres, type EmbeddedDatabase } from "../embedded/start";
import { isEmbeddedPostgresError } from "../embedded/errors";
import { applyMigrations } from "../migrate/apply-migrations";
import { probeDatabase } from "../runtime/probe-database";
import { createDatabase, databaseUrlFor, dropDatabase, withAdminClient } from "./admin";
import { harnessDatabaseName, isAbandonedHarnessDatabase } from "./database-names";
import { testServerUrlFromEnv } from "./env";
import "./provided-context";

/** Older harness databases were left by a run that was killed before its teardown. */
const ABANDONED_AFTER_MS = 24 * 60 * 60 * 1000;

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cleanups: Array<() => Promise<void>> = [];
  const teardown = async () => {
    const errors: unknown[] = [];
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        errors.push(error);
      }
    }
    cleanups.length = 0;
    if (errors.length > 0)
      throw new AggregateError(errors, "integration test database teardown failed");
  };

  try {
    const adminUrl = await testServer(cleanups);
    await dropAbandonedDatabases(adminUrl);

    const templateDatabase = harnessDatabaseName("template");
    await createDatabase(adminUrl, templateDatabase, { template: "template0" });
    cleanups.push(() => dropDatabase(adminUrl, templateDatabase));
    await applyMigrations(databaseUrlFor(adminUrl, templateDatabase));
    await sealTemplate(adminUrl, templateDatabase);

    project.provide("copybackTestDatabase", { adminUrl, templateDatabase });
    return teardown;
  } catch (error) {
    await teardown().catch(() => undefined);
    throw error;
  }
}

async function testServer(cleanups: Array<() => Promise<void>>): Promise<string> {
  const external = testServerUrlFromEnv();
  if (external) {
    await probeDatabase(external);
    return external;
  }
  const instanceRoot = await fs.mkdtemp(path.join(os.tmpdir(), "copyback-test-pg-"));
  cleanups.push(() => fs.rm(instanceRoot, { recursive: true, force: true }));
  const server = await startOnFreePort(instanceRoot);
  cleanups.push(() => server.stop());
  return server.url;
}

async function startOnFreePort(instanceRoot: string): Promise<EmbeddedDatabase> {
  for (let attempt = 1; ; attempt++) {
    try {
      // A throwaway cluster: durability does not matter, speed does.
      return await startEmbeddedPostgres({
        instanceRoot,
        port: await freePort(),
        unsafeFastWrites: true,
      });
    } catch (error) {
      // Another run grabbed the port between our probe and the server's bind.
      if (!isEmbeddedPostgresError(error, "PORT_IN_USE") || attempt >= 5) throw error;
    }
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Nobody may connect to the template: CREATE DATABASE ... TEMPLATE fails while anyone is.
 * Refuse new connections, and end any a migration step left open (a leak worth fixing there).
 */
async function sealTemplate(adminUrl: string, templateDatabase: string): Promise<void> {
  await withAdminClient(adminUrl, async (client) => {
    await client.query(
      `ALTER DATABASE ${client.escapeIdentifier(templateDatabase)} WITH ALLOW_CONNECTIONS false`,
    );
    const lingering = await client.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [templateDatabase],
    );
    if ((lingering.rowCount ?? 0) > 0) {
      console.warn(
        `[copyback test db] ended ${lingering.rowCount} connection(s) the migration left open on the template`,
      );
    }
  });
}

async function dropAbandonedDatabases(adminUrl: string): Promise<void> {
  const now = Date.now();
  const names = await withAdminClient(adminUrl, async (client) => {
    const result = await client.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'copyback\\_%'",
    );
    return result.rows
      .map((row) => row.datname)
      .filter((name) => isAbandonedHarnessDatabase(name, now, ABANDONED_AFTER_MS));
  });
  for (const name of names) await dropDatabase(adminUrl, name).catch(() => undefined);
}
