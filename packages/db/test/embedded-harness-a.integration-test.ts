// The integration harness as a test file sees it. Its twin (embedded-harness-b) does the same
// writes: each only ever sees its own row, because each file gets its own database.
import { describe, expect, it } from "vitest";
import { createScratchDatabase, testDatabaseContext, useTestDatabase } from "../src/testing/index";
import { query } from "./embedded-fixtures/support";

const db = useTestDatabase();

describe("useTestDatabase (file A)", () => {
  it("gives this file a migrated database of its own", async () => {
    const tables = await query<{ table_name: string }>(
      db.url(),
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    expect(tables.map((t) => t.table_name)).toEqual(
      expect.arrayContaining(["_prisma_migrations", "companies"]),
    );
    const { templateDatabase } = testDatabaseContext();
    expect(db.name()).not.toBe(templateDatabase);
    expect(new URL(db.url()).pathname).toBe(`/${db.name()}`);
  });

  it("starts empty and keeps this file's writes to itself", async () => {
    await db.prisma().company.create({ data: { name: "Written by file A", issuePrefix: "FA" } });
    const companies = await db.prisma().company.findMany();
    expect(companies.map((c) => c.name)).toEqual(["Written by file A"]);
  });

  it("keeps the template closed to connections, so cloning never fails", async () => {
    const { adminUrl, templateDatabase } = testDatabaseContext();
    const template = new URL(adminUrl);
    template.pathname = `/${templateDatabase}`;
    await expect(query(template.toString(), "SELECT 1")).rejects.toThrow(
      /not currently accepting connections/,
    );
  });

  it("makes empty scratch databases and drops them", async () => {
    const scratch = await createScratchDatabase();
    expect(
      await query(
        scratch.url,
        "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
      ),
    ).toEqual([{ n: 0 }]);
    await scratch.drop();
    await scratch.drop();
    const { adminUrl } = testDatabaseContext();
    expect(
      await query(adminUrl, "SELECT 1 FROM pg_database WHERE datname = $1", [scratch.name]),
    ).toEqual([]);
  });
});
