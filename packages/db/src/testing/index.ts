// Integration-test helpers (import from "@copyback/db/testing" in *.integration-test.ts files).
//
//   const db = useTestDatabase();          // a fresh, migrated database for this test file
//   it("...", async () => { await db.prisma().company.create(...) });
//
// Each file gets its own database cloned from the run's migrated template (see global-setup.ts),
// so files run in parallel without seeing each other's rows, and nothing needs truncating.
import { afterAll, beforeAll, inject } from "vitest";
import { createPrismaClient, type PrismaClient } from "../client";
import { createDatabase, databaseUrlFor, dropDatabase } from "./admin";
import { harnessDatabaseName } from "./database-names";
import type { TestDatabaseContext } from "./provided-context";

export type { TestDatabaseContext } from "./provided-context";
export { databaseUrlFor } from "./admin";

export interface TestDatabase {
  /** Name of this file's database. */
  name(): string;
  /** Superuser URL of this file's database. */
  url(): string;
  /** A Prisma client on this file's database, created on first use and disconnected after the file. */
  prisma(): PrismaClient;
}

/** The server and template the integration tier's globalSetup prepared. */
export function testDatabaseContext(): TestDatabaseContext {
  const context = inject("copybackTestDatabase") as TestDatabaseContext | undefined;
  if (!context) {
    throw new Error(
      "No test database server: useTestDatabase() and createScratchDatabase() run only in the integration tier " +
        "(files named *.integration-test.ts, whose globalSetup is packages/db/src/testing/global-setup.ts).",
    );
  }
  return context;
}

/** Registers beforeAll/afterAll hooks: a database cloned from the migrated template for this file, dropped afterwards. */
export function useTestDatabase(options: { poolSize?: number } = {}): TestDatabase {
  let state: { adminUrl: string; name: string; url: string } | undefined;
  let client: PrismaClient | undefined;

  beforeAll(async () => {
    const { adminUrl, templateDatabase } = testDatabaseContext();
    const name = harnessDatabaseName("test");
    await createDatabase(adminUrl, name, { template: templateDatabase });
    state = { adminUrl, name, url: databaseUrlFor(adminUrl, name) };
  });

  afterAll(async () => {
    const current = state;
    state = undefined;
    try {
      await client?.$disconnect();
    } finally {
      client = undefined;
      if (current) await dropDatabase(current.adminUrl, current.name);
    }
  });

  const ready = () => {
    if (!state)
      throw new Error(
        "useTestDatabase(): the database exists only inside tests and hooks of the file that called it (after beforeAll).",
      );
    return state;
  };
  return {
    name: () => ready().name,
    url: () => ready().url,
    prisma: () =>
      (client ??= createPrismaClient({
        databaseUrl: ready().url,
        poolSize: options.poolSize ?? 4,
        applicationName: "copyback-test",
      })),
  };
}

export interface ScratchDatabase {
  name: string;
  url: string;
  /** Drops the database, ending any session still on it. Idempotent. */
  drop(): Promise<void>;
}

/** An empty database (no migrations applied), for tests of migrations themselves. Call drop() when done. */
export async function createScratchDatabase(): Promise<ScratchDatabase> {
  const { adminUrl } = testDatabaseContext();
  const name = harnessDatabaseName("scratch");
  await createDatabase(adminUrl, name, { template: "template0" });
  let dropped: Promise<void> | undefined;
  return {
    name,
    url: databaseUrlFor(adminUrl, name),
    drop: () => (dropped ??= dropDatabase(adminUrl, name)),
  };
}
