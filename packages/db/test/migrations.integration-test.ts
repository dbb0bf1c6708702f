// The migrations folder produces exactly schema.prisma, through the same WASM engine path the
// launcher, the worker and the test harness use; applying is idempotent and atomic.
import { createHash } from "node:crypto";
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations } from "../src/migrate/apply-migrations";
import { createMigration } from "../src/migrate/create-migration";
import { MigrationError } from "../src/migrate/errors";
import { diffDatabaseToSchema, driftFromSchema } from "../src/migrate/schema-diff";
import {
  HAND_WRITTEN_INDEXES,
  HAND_WRITTEN_TRIGGERS,
  splitMigrationSteps,
} from "../src/schema/hand-written";
import { MIGRATIONS_DIR, SCHEMA_PATH } from "../src/schema/paths";
import { testDatabaseContext } from "../src/testing/index";
import { createScratchDatabase, useScratchDatabase } from "./support/scratch-database";

async function query<Row extends pg.QueryResultRow>(
  url: string,
  sql: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

async function localMigrationNames(): Promise<string[]> {
  const entries = await readdir(MIGRATIONS_DIR, { withFileTypes: true });
  return entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
}

async function tempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "copyback-migrations-test-"));
}

describe("migrations produce exactly the schema", () => {
  const db = useScratchDatabase();
  let firstApplied: string[] = [];

  beforeAll(async () => {
    firstApplied = (await applyMigrations(db.url())).applied;
  });

  it("applies every local migration to an empty database", async () => {
    expect(firstApplied).toEqual(await localMigrationNames());
    expect(firstApplied.length).toBeGreaterThan(0);
  });

  it("leaves no difference between the migrated database and schema.prisma", async () => {
    const script = await diffDatabaseToSchema(db.url());
    // Every step the engine proposes would be drift; hand-written objects may only appear as
    // drops of themselves, and driftFromSchema removes exactly those.
    expect(await driftFromSchema(db.url())).toEqual([]);
    const handWrittenNames = HAND_WRITTEN_INDEXES.map((index) => `DROP INDEX "${index.name}";`);
    for (const step of splitMigrationSteps(script)) expect(handWrittenNames).toContain(step.sql);
  });

  it("R-OWN-5: has the hand-written partial unique index: one open action per company, issue, cause and fingerprint", async () => {
    for (const index of HAND_WRITTEN_INDEXES) {
      const rows = await query<{ indexdef: string }>(
        db.url(),
        "SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename = $1 AND indexname = $2",
        [index.table, index.name],
      );
      expect(rows).toHaveLength(1);
      for (const part of index.definitionIncludes) expect(rows[0]?.indexdef).toContain(part);
    }
  });

  it("has the hand-written triggers", async () => {
    for (const trigger of HAND_WRITTEN_TRIGGERS) {
      const rows = await query(
        db.url(),
        "SELECT 1 FROM pg_trigger WHERE tgname = $1 AND tgrelid = $2::regclass AND NOT tgisinternal",
        [trigger.name, trigger.table],
      );
      expect(rows).toHaveLength(1);
    }
  });

  it("records each migration in _prisma_migrations as prisma migrate deploy does", async () => {
    const rows = await query<{
      migration_name: string;
      checksum: string;
      finished: boolean;
      rolled_back: boolean;
      applied_steps_count: number;
    }>(
      db.url(),
      "SELECT migration_name, checksum, finished_at IS NOT NULL AS finished, rolled_back_at IS NOT NULL AS rolled_back, applied_steps_count FROM _prisma_migrations ORDER BY migration_name",
    );
    const names = await localMigrationNames();
    expect(rows.map((row) => row.migration_name)).toEqual(names);
    for (const row of rows) {
      const sql = await readFile(path.join(MIGRATIONS_DIR, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(sql).digest("hex"));
      expect(row.finished).toBe(true);
      expect(row.rolled_back).toBe(false);
      expect(row.applied_steps_count).toBe(1);
    }
  });

  it("is idempotent: a second call applies nothing and writes no row", async () => {
    const before = await query<{ n: number }>(
      db.url(),
      "SELECT count(*)::int AS n FROM _prisma_migrations",
    );
    expect(await applyMigrations(db.url())).toEqual({ applied: [] });
    expect(await query(db.url(), "SELECT count(*)::int AS n FROM _prisma_migrations")).toEqual(
      before,
    );
  });

  it("notices drift: a migrated database missing an index is not the schema", async () => {
    const other = await createScratchDatabase();
    try {
      await applyMigrations(other.url);
      await query(other.url, 'DROP INDEX "issues_company_id_status_idx"');
      const drift = await driftFromSchema(other.url);
      expect(drift.map((step) => step.sql)).toEqual([
        expect.stringContaining('CREATE INDEX "issues_company_id_status_idx"'),
      ]);
    } finally {
      await other.drop();
    }
  });
});

describe("applyMigrations under concurrency and failure", () => {
  it("concurrent callers apply each migration exactly once", async () => {
    const db = await createScratchDatabase();
    try {
      const results = await Promise.all([
        applyMigrations(db.url),
        applyMigrations(db.url),
        applyMigrations(db.url),
      ]);
      expect(results.flatMap((result) => result.applied)).toEqual(await localMigrationNames());
      const rows = await query<{ n: number }>(
        db.url,
        "SELECT count(*)::int AS n FROM _prisma_migrations",
      );
      expect(rows[0]?.n).toBe((await localMigrationNames()).length);
    } finally {
      await db.drop();
    }
  });

  it("applies a failing migration not at all and keeps refusing until it is resolved", async () => {
    const dir = await tempDir();
    const db = await createScratchDatabase();
    try {
      await cp(MIGRATIONS_DIR, dir, { recursive: true });
      const broken = path.join(dir, "29990101000000_broken");
      await mkdir(broken);
      await writeFile(
        path.join(broken, "migration.sql"),
        'CREATE TABLE "half_done" (id int);\nSELECT no_such_function();\n',
      );

      const error = await applyMigrations(db.url, { migrationsDir: dir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as MigrationError).code).toBe("engine_failed");
      expect((error as MigrationError).message).toContain("no_such_function");
      // One migration, one transaction: the statement before the failure did not survive.
      expect(await query(db.url, "SELECT to_regclass('half_done') AS t")).toEqual([{ t: null }]);
      // The earlier migrations did apply, and the failure is on record, as with migrate deploy.
      const rows = await query<{ migration_name: string; finished: boolean }>(
        db.url,
        "SELECT migration_name, finished_at IS NOT NULL AS finished FROM _prisma_migrations ORDER BY migration_name",
      );
      expect(rows.at(-1)).toEqual({ migration_name: "29990101000000_broken", finished: false });
      expect(rows.slice(0, -1).every((row) => row.finished)).toBe(true);
      // The fast path must not hide a failed migration.
      await expect(applyMigrations(db.url, { migrationsDir: dir })).rejects.toBeInstanceOf(
        MigrationError,
      );
    } finally {
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("gives up with a clear error when another process holds the apply lock too long", async () => {
    const db = await createScratchDatabase();
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    try {
      await holder.query(
        "SELECT pg_advisory_lock(hashtextextended('copyback:apply-migrations', 0))",
      );
      const error = await applyMigrations(db.url, { lockTimeoutMs: 300 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as MigrationError).code).toBe("migration_lock_timeout");
      expect(await query(db.url, "SELECT to_regclass('_prisma_migrations') AS t")).toEqual([
        { t: null },
      ]);
    } finally {
      await holder.end();
      await db.drop();
    }
  });

  it("rejects a missing migrations folder and touches nothing", async () => {
    const db = await createScratchDatabase();
    try {
      const error = await applyMigrations(db.url, {
        migrationsDir: path.join(os.tmpdir(), "copyback-no-such-migrations"),
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as MigrationError).code).toBe("migrations_missing");
      expect(await query(db.url, "SELECT to_regclass('_prisma_migrations') AS t")).toEqual([
        { t: null },
      ]);
    } finally {
      await db.drop();
    }
  });
});

describe("the hand-written objects work", () => {
  const db = useScratchDatabase();
  const ids = { company: "", issue: "", agent: "", run: "" };

  beforeAll(async () => {
    await applyMigrations(db.url());
    const [company] = await query<{ id: string }>(
      db.url(),
      "INSERT INTO companies (id, name, issue_prefix) VALUES (gen_random_uuid(), 'C', 'C') RETURNING id",
    );
    ids.company = company?.id ?? "";
    const [agent] = await query<{ id: string }>(
      db.url(),
      "INSERT INTO agents (id, company_id, name, command) VALUES (gen_random_uuid(), $1, 'A', ARRAY['true']) RETURNING id",
      [ids.company],
    );
    ids.agent = agent?.id ?? "";
    const [issue] = await query<{ id: string }>(
      db.url(),
      "INSERT INTO issues (id, company_id, number, identifier, title) VALUES (gen_random_uuid(), $1, 1, 'C-1', 't') RETURNING id",
      [ids.company],
    );
    ids.issue = issue?.id ?? "";
    const [run] = await query<{ id: string }>(
      db.url(),
      "INSERT INTO heartbeat_runs (id, company_id, agent_id, native_issue_id) VALUES (gen_random_uuid(), $1, $2, $3) RETURNING id",
      [ids.company, ids.agent, ids.issue],
    );
    ids.run = run?.id ?? "";
  });

  const insertAction = (status: string, fingerprint = "fp-1") =>
    query(
      db.url(),
      "INSERT INTO issue_recovery_actions (id, company_id, issue_id, cause, fingerprint, owner_type, status) VALUES (gen_random_uuid(), $1, $2, 'native_workspace_finalization_owner_unverified', $3, 'board', $4::recovery_status)",
      [ids.company, ids.issue, fingerprint, status],
    );

  it("R-OWN-5: a second open action for the same company, issue, cause and fingerprint is refused", async () => {
    await insertAction("active");
    await expect(insertAction("escalated")).rejects.toMatchObject({ code: "23505" });
    // Closed actions are history and never block; another fingerprint is another hold.
    await insertAction("resolved");
    await insertAction("cancelled");
    await insertAction("active", "fp-2");
    const rows = await query<{ n: number }>(
      db.url(),
      "SELECT count(*)::int AS n FROM issue_recovery_actions",
    );
    expect(rows[0]?.n).toBe(4);
  });

  it("native_run_results rows cannot be updated or deleted", async () => {
    const [result] = await query<{ id: string }>(
      db.url(),
      "INSERT INTO native_run_results (id, company_id, run_id, issue_id, agent_id, schema_status, payload, canonical_sha256, dedupe_key) VALUES (gen_random_uuid(), $1, $2, $3, $4, 'accepted', '{}', 'sha', 'k1') RETURNING id",
      [ids.company, ids.run, ids.issue, ids.agent],
    );
    await expect(
      query(db.url(), "UPDATE native_run_results SET payload = '{\"x\":1}' WHERE id = $1", [
        result?.id,
      ]),
    ).rejects.toThrow(/immutable/);
    await expect(
      query(db.url(), "DELETE FROM native_run_results WHERE id = $1", [result?.id]),
    ).rejects.toThrow(/immutable/);
    expect(
      await query(db.url(), "SELECT payload FROM native_run_results WHERE id = $1", [result?.id]),
    ).toEqual([{ payload: {} }]);
  });

  it("run evidence is never deleted through a parent: deleting a company with runs is refused", async () => {
    // PostgreSQL 15 reports foreign_key_violation (23503), 18 restrict_violation (23001).
    await expect(
      query(db.url(), "DELETE FROM companies WHERE id = $1", [ids.company]),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^(23503|23001)$/) });
    expect(
      await query(db.url(), "SELECT id FROM heartbeat_runs WHERE id = $1", [ids.run]),
    ).toHaveLength(1);
  });
});

describe("migration:create", () => {
  let dir = "";
  let schemaPath = "";

  beforeAll(async () => {
    dir = await tempDir();
    await cp(MIGRATIONS_DIR, path.join(dir, "migrations"), { recursive: true });
    schemaPath = path.join(dir, "schema.prisma");
    await writeFile(schemaPath, await readFile(SCHEMA_PATH));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const create = (name: string) =>
    createMigration({
      serverUrl: testDatabaseContext().adminUrl,
      name,
      migrationsDir: path.join(dir, "migrations"),
      schemaPath,
      now: new Date("2999-01-02T03:04:05Z"),
    });

  it("creates nothing when the migrations already produce the schema", async () => {
    expect(await create("nothing")).toEqual({ kind: "up_to_date" });
    expect((await readdir(path.join(dir, "migrations"))).sort()).toEqual(
      (await readdir(MIGRATIONS_DIR)).sort(),
    );
  });

  it("writes the SQL of a schema change as a new migration folder", async () => {
    const schema = await readFile(schemaPath, "utf8");
    await writeFile(
      schemaPath,
      schema.replace(
        '  wakeReason             String?     @map("wake_reason")',
        '  wakeReason             String?     @map("wake_reason")\n  sentinel               String?',
      ),
    );
    const result = await create("add_sentinel");
    expect(result.kind).toBe("created");
    if (result.kind !== "created") return;
    expect(path.basename(result.folder)).toBe("29990102030405_add_sentinel");
    expect(result.sql).toMatch(/ALTER TABLE "heartbeat_runs" ADD COLUMN\s+"sentinel" TEXT;/);
    expect(result.sql).not.toContain("issue_recovery_actions_one_open_per_fingerprint");
    expect(await readFile(path.join(result.folder, "migration.sql"), "utf8")).toBe(result.sql);
    // The new folder applies on top of the others and then there is nothing left to create.
    expect(await create("again")).toEqual({ kind: "up_to_date" });
  });

  it("rejects a bad name before touching anything", async () => {
    const before = (await readdir(path.join(dir, "migrations"))).sort();
    await expect(create("Bad Name!")).rejects.toMatchObject({ code: "invalid_name" });
    expect((await readdir(path.join(dir, "migrations"))).sort()).toEqual(before);
  });
});
