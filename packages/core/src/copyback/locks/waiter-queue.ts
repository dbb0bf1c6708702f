// The cross-process waiter queue of one target: `<hash>.queue.sqlite`, a table of tickets.
// SQLite's reserved lock has no queue: whoever polls first after a release wins, so an early
// waiter could lose every race to later ones. Tickets order the waiters instead: only the oldest
// live ticket attempts the lock. A ticket is live while its owner refreshes its heartbeat; a
// waiter that died or froze is skipped once its heartbeat is older than the stale limit.
//
// This file decides fairness only, never ownership: a lost, stale or forged ticket can delay or
// hasten an attempt, but admission is still the SQLite reserved lock alone (R-LK-2, R-LK-3).
// Heartbeats use the wall clock of one host; a clock step only skews fairness for a moment,
// since a heartbeat from the "future" by more than the stale limit counts as stale too.
//
// Every statement runs with busy timeout 0 (better-sqlite3's busy handler sleeps synchronously,
// blocking the event loop); callers treat SQLITE_BUSY as "not now" and try on their next poll.
import type Database from "better-sqlite3";
import { createFileIfMissing, isSqliteBusy, namesSameFile, openVerifiedDatabase } from "./lock-file";

export const DEFAULT_TICKET_HEARTBEAT_MS = 1_000;
export const DEFAULT_TICKET_STALE_MS = 5_000;

export interface TicketPolicy {
  /** How often a waiter refreshes its ticket. */
  heartbeatMs: number;
  /** A ticket whose heartbeat is further than this from now is skipped. */
  staleMs: number;
}

/** Pure: whether a ticket with this heartbeat still holds its place. */
export function isTicketLive(heartbeatAt: number, now: number, staleMs: number): boolean {
  return Math.abs(now - heartbeatAt) <= staleMs;
}

/** Tickets this much older than the stale limit are deleted by whoever enqueues next. */
export function ticketGarbageAfterMs(staleMs: number): number {
  return Math.max(60_000, staleMs * 10);
}

export const BUSY = Symbol("busy");
export type Busy = typeof BUSY;

/** Runs `fn`, mapping SQLITE_BUSY to BUSY; other errors propagate. */
export function orBusy<T>(fn: () => T): T | Busy {
  try {
    return fn();
  } catch (error) {
    if (isSqliteBusy(error)) return BUSY;
    throw error;
  }
}

interface SharedConnection {
  db: Database.Database;
  dev: number;
  ino: number;
  /** Schema and journal mode checked on this connection. */
  ready: boolean;
  /** Prepared once per connection: the uncontended path runs one of them on every acquire. */
  statements: Map<string, Database.Statement>;
}

const CONNECTIONS_KEY = Symbol.for("@copyback/core:directory-merge-locks:queue-connections");
const MAX_SHARED_CONNECTIONS = 64;

/**
 * Queue connections stay open per process (LRU-bounded): opening a WAL database costs about half
 * a millisecond, which the uncontended fast path (one read: "anyone waiting?") would otherwise
 * pay on every acquire. Reuse is checked against the path's current inode; a replaced queue file
 * only resets fairness, so the connection is then simply reopened. Closing a queue connection is
 * SQLite's business (no raw descriptor of a queue file is ever closed while one is open).
 */
function sharedConnection(file: string, label: string): SharedConnection {
  const holder = globalThis as unknown as Record<symbol, Map<string, SharedConnection> | undefined>;
  const cache = (holder[CONNECTIONS_KEY] ??= new Map());
  const hit = cache.get(file);
  if (hit) {
    cache.delete(file);
    if (hit.db.open && namesSameFile(file, hit)) {
      cache.set(file, hit); // most recently used last
      return hit;
    }
    if (hit.db.open) hit.db.close();
  }
  createFileIfMissing(file);
  const opened = openVerifiedDatabase(file, label);
  const entry: SharedConnection = { db: opened.db, dev: opened.dev, ino: opened.ino, ready: false, statements: new Map() };
  cache.set(file, entry);
  for (const [key, old] of cache) {
    if (cache.size <= MAX_SHARED_CONNECTIONS) break;
    cache.delete(key);
    old.db.close();
  }
  return entry;
}

/** One target's queue, seen with one ticket policy. Cheap to create: the connection is shared. */
export class WaiterQueue {
  private constructor(
    private readonly file: string,
    private readonly label: string,
    private readonly staleMs: number,
  ) {}

  /** Opens (creating if needed) the queue file with the same checks as a lock file. */
  static open(file: string, label: string, policy: TicketPolicy): WaiterQueue {
    const queue = new WaiterQueue(file, label, policy.staleMs);
    sharedConnection(file, label);
    return queue;
  }

  /** The connection, with schema and WAL mode (readers never wait for writers); may throw BUSY. */
  private get db(): Database.Database {
    return this.connection().db;
  }

  /** A statement prepared on the current connection (reused while the connection lives). */
  private statement(sql: string): Database.Statement {
    const connection = this.connection();
    let prepared = connection.statements.get(sql);
    if (prepared === undefined) {
      prepared = connection.db.prepare(sql);
      connection.statements.set(sql, prepared);
    }
    return prepared;
  }

  private connection(): SharedConnection {
    const connection = sharedConnection(this.file, this.label);
    if (!connection.ready) {
      if (connection.db.pragma("journal_mode", { simple: true }) !== "wal") connection.db.pragma("journal_mode = WAL");
      connection.db.pragma("synchronous = NORMAL");
      connection.db.exec(`CREATE TABLE IF NOT EXISTS tickets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        pid INTEGER NOT NULL,
        enqueued_at INTEGER NOT NULL,
        heartbeat_at INTEGER NOT NULL
      )`);
      connection.ready = true;
    }
    return connection;
  }

  /** Takes a place at the back. Returns the ticket id, or BUSY. */
  enqueue(pid: number, now: number): number | Busy {
    return orBusy(() => {
      const db = this.db;
      return db
        .transaction(() => {
          const garbage = ticketGarbageAfterMs(this.staleMs);
          this.statement("DELETE FROM tickets WHERE heartbeat_at < ? OR heartbeat_at > ?").run(now - garbage, now + garbage);
          return Number(this.statement("INSERT INTO tickets (pid, enqueued_at, heartbeat_at) VALUES (?, ?, ?)").run(pid, now, now).lastInsertRowid);
        })
        .immediate();
    });
  }

  /** Refreshes a ticket. false: it is gone (collected after a long stall), so re-enqueue. */
  heartbeat(ticket: number, now: number): boolean | Busy {
    return orBusy(() => {
      return this.statement("UPDATE tickets SET heartbeat_at = ? WHERE id = ?").run(now, ticket).changes > 0;
    });
  }

  /** Live tickets ahead of `ticket` (all live tickets when null). 0 means: your turn. */
  liveAhead(ticket: number | null, now: number): number | Busy {
    return orBusy(() => {
      const row = this
        .statement("SELECT count(*) AS n FROM tickets WHERE id < ? AND heartbeat_at BETWEEN ? AND ?")
        .get(ticket ?? Number.MAX_SAFE_INTEGER, now - this.staleMs, now + this.staleMs) as { n: number };
      return row.n;
    });
  }

  /** Live tickets in total (for `locks list`). */
  liveCount(now: number): number | Busy {
    return this.liveAhead(null, now);
  }

  remove(ticket: number): true | Busy {
    return orBusy(() => {
      this.statement("DELETE FROM tickets WHERE id = ?").run(ticket);
      return true as const;
    });
  }

}
