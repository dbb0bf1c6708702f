// Pure helpers of the migration layer: step parsing, drift filtering, folder names.
import { describe, expect, it } from "vitest";
import { driftSteps, joinMigrationSteps, splitMigrationSteps } from "../src/schema/hand-written";
import { migrationFolderName, migrationTimestamp } from "../src/migrate/migrations-directory";
import { MigrationError } from "../src/migrate/errors";

const SCRIPT = `-- CreateEnum
CREATE TYPE "x" AS ENUM ('a', 'b');

-- CreateTable
CREATE TABLE "t" (
    "id" UUID NOT NULL,

    CONSTRAINT "t_pkey" PRIMARY KEY ("id")
);

-- DropIndex
DROP INDEX "issue_recovery_actions_one_open_per_fingerprint";

-- DropIndex
DROP INDEX "some_other_index";
`;

describe("migration steps", () => {
  it("splits an engine script into its steps", () => {
    expect(splitMigrationSteps(SCRIPT).map((step) => step.header)).toEqual([
      "CreateEnum",
      "CreateTable",
      "DropIndex",
      "DropIndex",
    ]);
    expect(splitMigrationSteps(SCRIPT)[1]?.sql).toContain(
      'CONSTRAINT "t_pkey" PRIMARY KEY ("id")\n);',
    );
  });

  it("reads the engine's empty migration as no step", () => {
    expect(splitMigrationSteps("-- This is an empty migration.\n")).toEqual([]);
    expect(splitMigrationSteps("")).toEqual([]);
  });

  it("drops only the drop of a hand-written index from drift", () => {
    const drift = driftSteps(SCRIPT);
    expect(drift.map((step) => step.sql)).not.toContain(
      'DROP INDEX "issue_recovery_actions_one_open_per_fingerprint";',
    );
    expect(drift.map((step) => step.sql)).toContain('DROP INDEX "some_other_index";');
    expect(drift).toHaveLength(3);
  });

  it("joins steps back into the engine's layout", () => {
    expect(joinMigrationSteps(splitMigrationSteps(SCRIPT))).toBe(SCRIPT);
  });
});

describe("migration folder names", () => {
  it("prefixes the UTC timestamp Prisma uses", () => {
    expect(migrationTimestamp(new Date("2026-11-30T01:34:10.999Z"))).toBe("20261130013410");
    expect(migrationFolderName("add_leases", new Date("2026-01-02T03:04:05Z"))).toBe(
      "20260102030405_add_leases",
    );
  });

  it.each(["", "Add", "add-leases", "add leases", "../x"])("rejects %j", (name) => {
    expect(() => migrationFolderName(name, new Date())).toThrow(MigrationError);
  });
});
