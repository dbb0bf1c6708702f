// resolveDatabase: an existing server by URL (verified, optionally migrated) or the embedded one.
import fs from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "../src/embedded/start";
import { resolveDatabase } from "../src/runtime/resolve-database";
import { DatabaseConnectionError } from "../src/runtime/errors";
import { createScratchDatabase } from "../src/testing/index";
import { freePort, query, tempInstanceRoot } from "./embedded-fixtures/support";

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true });
});
function newRoot(): string {
  const root = tempInstanceRoot();
  roots.push(root);
  return root;
}

async function refusal(promise: Promise<unknown>): Promise<DatabaseConnectionError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DatabaseConnectionError);
  return error as DatabaseConnectionError;
}

async function tableNames(url: string): Promise<string[]> {
  const rows = await query<{ table_name: string }>(
    url,
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
  );
  return rows.map((row) => row.table_name);
}

describe("resolveDatabase with a DATABASE_URL", () => {
  it("names host, port and database of an unreachable server, never the password, and starts nothing", async () => {
    const root = newRoot();
    const port = await freePort(); // nothing listens there
    const error = await refusal(
      resolveDatabase({
        databaseUrl: `postgresql://app:Sup3r-s3cret@127.0.0.1:${port}/orders`,
        instanceRoot: root,
      }),
    );
    expect(error.code).toBe("DATABASE_UNREACHABLE");
    expect(error.message).toContain(`app@127.0.0.1:${port}/orders`);
    expect(error.message).not.toContain("Sup3r-s3cret");
    expect(String(error.stack)).not.toContain("Sup3r-s3cret");
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it("reports a wrong password without repeating it", async () => {
    const root = newRoot();
    const server = await startEmbeddedPostgres({ instanceRoot: root, port: await freePort() });
    try {
      const wrong = new URL(server.url);
      wrong.password = "Wr0ng-pa55word";
      const error = await refusal(
        resolveDatabase({ databaseUrl: wrong.toString(), instanceRoot: newRoot() }),
      );
      expect(error.code).toBe("DATABASE_UNREACHABLE");
      expect(error.message).toMatch(/password authentication failed/);
      expect(error.message).not.toContain("Wr0ng-pa55word");
    } finally {
      await server.stop();
    }
  });

  it("refuses a malformed URL without echoing it", async () => {
    const error = await refusal(
      resolveDatabase({
        databaseUrl: "postgresql://app:Sup3r-s3cret@host:port/db",
        instanceRoot: newRoot(),
      }),
    );
    expect(error.code).toBe("DATABASE_URL_INVALID");
    expect(error.message).not.toContain("Sup3r-s3cret");
  });

  it("uses a reachable server as is, migrating it only when asked", async () => {
    const untouched = await createScratchDatabase();
    const migrated = await createScratchDatabase();
    try {
      const plain = await resolveDatabase({ databaseUrl: untouched.url, instanceRoot: newRoot() });
      expect(plain).toMatchObject({ url: untouched.url, embedded: false });
      await plain.stop(); // nothing to stop; the server keeps answering
      expect(await tableNames(untouched.url)).toEqual([]);

      const withMigrations = await resolveDatabase({
        databaseUrl: migrated.url,
        instanceRoot: newRoot(),
        migrate: true,
      });
      expect(withMigrations.embedded).toBe(false);
      expect(await tableNames(migrated.url)).toEqual(
        expect.arrayContaining(["_prisma_migrations", "companies"]),
      );
    } finally {
      await untouched.drop();
      await migrated.drop();
    }
  });
});

describe("resolveDatabase without a DATABASE_URL", () => {
  it("starts the embedded server under the instance root, migrates it, and finds the data again after a restart", async () => {
    const root = newRoot();
    const port = await freePort();
    const first = await resolveDatabase({ instanceRoot: root, port });
    expect(first.embedded).toBe(true);
    expect(new URL(first.url).port).toBe(String(port));
    expect(await tableNames(first.url)).toEqual(
      expect.arrayContaining(["_prisma_migrations", "companies"]),
    );
    await query(
      first.url,
      "INSERT INTO companies (id, name, issue_prefix) VALUES (gen_random_uuid(), 'Kept Ltd', 'KEPT')",
    );
    const migrationsBefore = await query<{ n: number }>(
      first.url,
      "SELECT count(*)::int AS n FROM _prisma_migrations",
    );
    await first.stop();
    await first.stop();

    const second = await resolveDatabase({ instanceRoot: root, port });
    try {
      expect(await query(second.url, "SELECT name FROM companies")).toEqual([{ name: "Kept Ltd" }]);
      // Migrations are not re-applied.
      expect(await query(second.url, "SELECT count(*)::int AS n FROM _prisma_migrations")).toEqual(
        migrationsBefore,
      );
    } finally {
      await second.stop();
    }
  });

  it("skips migrations when told to", async () => {
    const root = newRoot();
    const server = await resolveDatabase({
      instanceRoot: root,
      port: await freePort(),
      migrate: false,
    });
    try {
      expect(await tableNames(server.url)).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});
