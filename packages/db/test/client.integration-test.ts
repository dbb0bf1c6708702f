// The client factory and the dedicated connection (R-OWN-6), on a real database.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../src/testing/index";
import { createPrismaClient } from "../src/client/create-prisma-client";
import { openDedicatedConnection } from "../src/client/dedicated-connection";
import { selectForUpdateSkipLocked, withTransaction } from "../src/client/transactions";
import { Prisma, type PrismaClient } from "../src/generated/prisma/client";

function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms),
    ),
  ]);
}

describe("createPrismaClient and openDedicatedConnection", () => {
  const db = useTestDatabase();
  let prisma: PrismaClient;

  beforeAll(() => {
    prisma = createPrismaClient({
      databaseUrl: db.url(),
      poolSize: 1,
      applicationName: "copyback-client-test",
    });
  });
  afterAll(async () => {
    await prisma?.$disconnect();
  });

  it("R-OWN-6: a one-connection pool still serves queries while the dedicated connection holds an advisory xact lock", async () => {
    const lockKey = `native-workspace-finalization:${randomUUID()}:${randomUUID()}`;
    const dedicated = await openDedicatedConnection(db.url(), {
      applicationName: "copyback-lock-test",
    });
    try {
      await dedicated.query("BEGIN");
      await dedicated.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [lockKey]);
      const dedicatedPid = (
        await dedicated.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")
      ).rows[0]?.pid;

      // The pool's only connection is another backend, free for reads and writes.
      const [poolRow] = await within(
        5_000,
        prisma.$queryRaw<Array<{ pid: number }>>`SELECT pg_backend_pid() AS pid`,
        "pool read",
      );
      expect(poolRow?.pid).toBeTypeOf("number");
      expect(poolRow?.pid).not.toBe(dedicatedPid);
      const company = await within(
        5_000,
        prisma.company.create({ data: { name: "Progress", issuePrefix: "P" } }),
        "pool write",
      );
      expect(company.id).toBeTypeOf("string");

      // The lock is held by the dedicated session, and the pool cannot take it meanwhile.
      const [tryLock] = await prisma.$queryRaw<
        Array<{ ok: boolean }>
      >`SELECT pg_try_advisory_lock(hashtextextended(${lockKey}, 0)) AS ok`;
      expect(tryLock?.ok).toBe(false);
      const holders = await prisma.$queryRaw<Array<{ pid: number; application_name: string }>>`
        SELECT l.pid, a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted`;
      expect(holders).toContainEqual({ pid: dedicatedPid, application_name: "copyback-lock-test" });
    } finally {
      await dedicated.query("ROLLBACK").catch(() => undefined);
      await dedicated.end();
    }
  });

  it("a dedicated connection that dies does not crash the process", async () => {
    const dedicated = await openDedicatedConnection(db.url());
    const pid = (await dedicated.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]
      ?.pid;
    await prisma.$queryRaw`SELECT pg_terminate_backend(${pid}::int)`;
    await expect(dedicated.query("SELECT 1")).rejects.toThrow();
    await dedicated.end().catch(() => undefined);
  });

  it("rejects a pool size that is not a positive integer", () => {
    expect(() => createPrismaClient({ databaseUrl: db.url(), poolSize: 0 })).toThrow(RangeError);
    expect(() => createPrismaClient({ databaseUrl: db.url(), poolSize: 1.5 })).toThrow(RangeError);
  });

  it("withTransaction commits together or not at all", async () => {
    const name = `tx-${randomUUID()}`;
    await expect(
      withTransaction(prisma, async (tx) => {
        await tx.company.create({ data: { name, issuePrefix: "T" } });
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(await prisma.company.count({ where: { name } })).toBe(0);
    await withTransaction(prisma, (tx) => tx.company.create({ data: { name, issuePrefix: "T" } }), {
      isolationLevel: "Serializable",
      timeoutMs: 10_000,
    });
    expect(await prisma.company.count({ where: { name } })).toBe(1);
  });
});

describe("selectForUpdateSkipLocked", () => {
  const db = useTestDatabase();
  let prisma: PrismaClient;
  beforeAll(async () => {
    prisma = createPrismaClient({ databaseUrl: db.url(), poolSize: 3 });
    const company = await prisma.company.create({ data: { name: "Queue", issuePrefix: "Q" } });
    for (const name of ["first", "second"])
      await prisma.environment.create({
        data: { companyId: company.id, name, provider: "fake", pluginId: "builtin.fake" },
      });
  });
  afterAll(async () => {
    await prisma?.$disconnect();
  });

  it("two concurrent claimers take different rows instead of waiting", async () => {
    const claim = Prisma.sql`SELECT id, name FROM environments ORDER BY name LIMIT 1`;
    let releaseFirst: () => void = () => undefined;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstClaimed: (name: string) => void = () => undefined;
    const firstName = new Promise<string>((resolve) => (firstClaimed = resolve));

    const first = withTransaction(
      prisma,
      async (tx) => {
        const rows = await selectForUpdateSkipLocked<{ id: string; name: string }>(tx, claim);
        firstClaimed(rows[0]?.name ?? "");
        await firstHolds;
        return rows;
      },
      { timeoutMs: 10_000 },
    );
    expect(await firstName).toBe("first");
    const second = await within(
      5_000,
      withTransaction(prisma, (tx) =>
        selectForUpdateSkipLocked<{ id: string; name: string }>(tx, claim),
      ),
      "second claim",
    );
    expect(second.map((row) => row.name)).toEqual(["second"]);
    releaseFirst();
    expect((await first).map((row) => row.name)).toEqual(["first"]);
  });

  it("refuses a SELECT that already has a locking clause", async () => {
    await expect(
      withTransaction(prisma, (tx) =>
        selectForUpdateSkipLocked(tx, Prisma.sql`SELECT id FROM environments FOR UPDATE`),
      ),
    ).rejects.toThrow(/locking clause/);
  });
});
