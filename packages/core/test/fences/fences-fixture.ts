// Helpers of the only-this-fence tests (packages/core/src/finalization/FENCES.md):
// a second connection that plays the other actor, and a deterministic interleaving of two
// statements through a table lock (no sleeps, no timing luck).
//
// The interleaving: PostgreSQL takes a statement's snapshot after the locks of the tables it
// writes (READ COMMITTED), so a writer that waits on `LOCK TABLE ... IN SHARE MODE` sees
// everything the lock holder committed meanwhile. Reads (ACCESS SHARE) are not blocked. So
//   holdTableLock -> start the actor -> waitForLockWaiters (the actor's read is done and its write
//   waits) -> the other actor's write -> release
// places the other actor's write exactly between the read and the write of the first.
import pg from "pg";

export interface TableLock {
  /** The holding connection: writes made through it commit with release(). */
  client: pg.Client;
  release(): Promise<void>;
}

/** Opens a connection and locks `table` in SHARE mode (plain reads go on; every writer of the table waits). */
export async function holdTableLock(databaseUrl: string, table: string): Promise<TableLock> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "fence-test-table-lock" });
  await client.connect();
  await client.query("BEGIN");
  await client.query(`LOCK TABLE ${client.escapeIdentifier(table)} IN SHARE MODE`);
  let released = false;
  return {
    client,
    release: async () => {
      if (released) return;
      released = true;
      try {
        await client.query("COMMIT");
      } finally {
        await client.end();
      }
    },
  };
}

/** Waits until `count` backends wait for a lock on `table` (the actor reached its write). */
export async function waitForLockWaiters(databaseUrl: string, table: string, count = 1, timeoutMs = 10_000): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: "fence-test-observer" });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ n: string }>(
        // Databases cloned from one template share table OIDs: count this database's waiters only.
        "SELECT count(*)::text AS n FROM pg_locks WHERE database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND relation = $1::regclass AND NOT granted",
        [table],
      );
      if (Number(rows[0]?.n ?? 0) >= count) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} lock waiter(s) on ${table}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    await client.end();
  }
}

/** A promise and the function that settles it (a gate a provider call waits at). */
export function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * A view of `prisma` whose raw writes ($executeRaw) wait at a gate: the actor using it makes its
 * reads, then stops before its first conditional write until open() (reached resolves when it
 * got there). For an interleaving in which another actor's whole step, several writes long,
 * happens between one actor's read and its write (a table lock would hold both back).
 */
export function gatedRawWrites<T extends object>(prisma: T): { db: T; reached: Promise<void>; open(): void } {
  const reached = gate();
  const go = gate();
  const db = new Proxy(prisma, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property === "$executeRaw" && typeof value === "function") {
        return async (...args: unknown[]) => {
          reached.open();
          await go.promise;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db, reached: reached.promise, open: () => go.open() };
}
