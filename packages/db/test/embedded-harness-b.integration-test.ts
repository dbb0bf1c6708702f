// Twin of embedded-harness-a: same writes, its own database.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../src/testing/index";

const db = useTestDatabase();

describe("useTestDatabase (file B)", () => {
  it("starts empty and keeps this file's writes to itself", async () => {
    await db.prisma().company.create({ data: { name: "Written by file B", issuePrefix: "FB" } });
    const companies = await db.prisma().company.findMany();
    expect(companies.map((c) => c.name)).toEqual(["Written by file B"]);
  });
});
