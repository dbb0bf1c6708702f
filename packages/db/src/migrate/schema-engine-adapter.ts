// The driver adapter factory handed to the WASM schema engine: adapter-pg, with two changes
// the engine needs and one piece of bookkeeping.
//  1. It reads PostgreSQL's internal `"char"` columns, as characters (pg-internal-char.ts).
//  2. `executeScript` sends the whole script as ONE simple-protocol query. adapter-pg splits
//     scripts on every `;`, which breaks any migration with a function body, a string or a
//     comment containing one, and runs the statements one by one. PostgreSQL runs a
//     multi-statement simple query as one implicit transaction, so a migration applies whole
//     or not at all — what Prisma's native engine does on PostgreSQL.
//  3. Every connection it opens (including the shadow database, which adapter-pg drops when
//     disposed) is remembered, so `disposeAll()` leaves no pool or database behind.
import { PrismaPg } from "@prisma/adapter-pg";
import type {
  SqlDriverAdapter,
  SqlMigrationAwareDriverAdapterFactory,
  Transaction,
} from "@prisma/driver-adapter-utils";
import { CharColumnMarkingClient, restoreCharColumns } from "./pg-internal-char";

export interface EngineAdapterFactory extends SqlMigrationAwareDriverAdapterFactory {
  disposeAll(): Promise<void>;
}

export function createEngineAdapterFactory(databaseUrl: string): EngineAdapterFactory {
  const inner = new PrismaPg({
    connectionString: databaseUrl,
    Client: CharColumnMarkingClient,
    max: 2,
    application_name: "copyback-schema-engine",
  });
  const open = new Set<SqlDriverAdapter>();

  const track = (adapter: SqlDriverAdapter): SqlDriverAdapter => {
    const wrapped: SqlDriverAdapter = Object.create(adapter) as SqlDriverAdapter;
    wrapped.queryRaw = async (query) => restoreCharColumns(await adapter.queryRaw(query));
    wrapped.startTransaction = async (isolationLevel) => {
      const tx = await adapter.startTransaction(isolationLevel);
      const wrappedTx: Transaction = Object.create(tx) as Transaction;
      wrappedTx.queryRaw = async (query) => restoreCharColumns(await tx.queryRaw(query));
      return wrappedTx;
    };
    // No parameters means pg uses the simple query protocol, which accepts many statements;
    // going through executeRaw keeps adapter-pg's mapping of database errors.
    wrapped.executeScript = async (script: string) => {
      await adapter.executeRaw({ sql: script, args: [], argTypes: [] });
    };
    wrapped.dispose = async () => {
      if (!open.delete(wrapped)) return;
      await adapter.dispose();
    };
    open.add(wrapped);
    return wrapped;
  };

  return {
    provider: inner.provider,
    adapterName: inner.adapterName,
    connect: async () => track(await inner.connect()),
    connectToShadowDb: async () => track(await inner.connectToShadowDb()),
    disposeAll: async () => {
      // Shadow databases first: adapter-pg drops them through a main-database connection.
      for (const adapter of [...open].reverse()) await adapter.dispose().catch(() => undefined);
    },
  };
}
