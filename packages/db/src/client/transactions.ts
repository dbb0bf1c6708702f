// Typed transaction helpers over Prisma's interactive transactions.
import { Prisma, type PrismaClient } from "../generated/prisma/client";

export type TransactionClient = Prisma.TransactionClient;
export type IsolationLevel = Prisma.TransactionIsolationLevel;

export interface TransactionOptions {
  isolationLevel?: IsolationLevel;
  /** How long the callback may run before Prisma rolls it back (Prisma's default is 5 s). */
  timeoutMs?: number;
  /** How long to wait for a pool connection to start the transaction (Prisma's default is 2 s). */
  maxWaitMs?: number;
}

/**
 * Runs `work` in one database transaction: everything it writes commits together or not at all.
 * Side effects outside the database belong after this returns (DESIGN.md section 7).
 */
export function withTransaction<T>(
  prisma: PrismaClient,
  work: (tx: TransactionClient) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  return prisma.$transaction(work, {
    ...(options.isolationLevel ? { isolationLevel: options.isolationLevel } : {}),
    ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    ...(options.maxWaitMs !== undefined ? { maxWait: options.maxWaitMs } : {}),
  });
}

/**
 * `<select> FOR UPDATE SKIP LOCKED` inside a transaction: rows another transaction holds are
 * skipped, not waited for — the queue-claim pattern (a queued run is claimed by exactly one
 * worker). `select` must be a plain SELECT without a locking clause, e.g.
 *   Prisma.sql`SELECT id FROM heartbeat_runs WHERE status = 'queued' ORDER BY created_at LIMIT 1`
 */
export function selectForUpdateSkipLocked<Row>(
  tx: TransactionClient,
  select: Prisma.Sql,
): Promise<Row[]> {
  if (/\bFOR\s+(UPDATE|SHARE|NO\s+KEY\s+UPDATE|KEY\s+SHARE)\b/i.test(select.sql)) {
    throw new Error("selectForUpdateSkipLocked: the SELECT already has a locking clause");
  }
  return tx.$queryRaw<Row[]>(Prisma.sql`${select} FOR UPDATE SKIP LOCKED`);
}
