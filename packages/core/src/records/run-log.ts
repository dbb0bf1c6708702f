// The local run log (`run_events`): what "records X at info level in the local run log" writes.
// Callers pass the transaction client of the change the entry describes, so both commit together.
import type { Prisma, PrismaClient, RunEventLevel, TransactionClient } from "@copyback/db/client";

export type DbOrTx = PrismaClient | TransactionClient;

export interface RunEventEntry {
  companyId: string;
  runId: string;
  level: RunEventLevel;
  /** Dotted, stable code, e.g. "result.accepted". */
  code: string;
  message: string;
  payload?: Prisma.InputJsonObject;
  /** When the entry happened, if not now (an event ordered against lines stamped earlier). */
  createdAt?: Date;
}

export async function recordRunEvent(db: DbOrTx, entry: RunEventEntry): Promise<void> {
  await db.runEvent.create({
    data: {
      companyId: entry.companyId,
      runId: entry.runId,
      level: entry.level,
      code: entry.code,
      message: entry.message,
      payload: entry.payload ?? {},
      ...(entry.createdAt ? { createdAt: entry.createdAt } : {}),
    },
  });
}
