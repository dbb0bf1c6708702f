// Opening a lock-root SQLite file safely. SQLite opens by name and follows symlinks, so the
// file is checked on both sides of the open: lstat before (a regular file with one link),
// lstat after (still the same inode), and the inode of the descriptor SQLite actually holds
// (found through /proc/self/fd and fstat). A symlink, a hard link (another name through which a
// second "lock" could be taken), or a file swapped in between is refused with a stable code.
//
// POSIX record locks belong to the process and inode: closing ANY descriptor of an inode drops
// every lock this process holds on it. So this module never opens a raw descriptor of a lock
// file except to create it (when nothing can hold it yet), and the per-process FIFO guarantees
// that only one connection per lock file exists in this process while a lock may be held.
import Database from "better-sqlite3";
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, type Stats } from "node:fs";
import { LockPathError } from "./errors";
import { isErrno } from "./owner-sidecar";

export interface VerifiedDatabase {
  db: Database.Database;
  dev: number;
  ino: number;
}

/** Creates an empty private file unless one exists; never follows a symlink at the name. */
export function createFileIfMissing(file: string): void {
  try {
    closeSync(openSync(file, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600));
  } catch (error) {
    if (!isErrno(error, "EEXIST")) throw error;
  }
}

/** Throws the refusal for anything but a regular file with exactly one link. */
export function assertPlainFile(st: Stats, label: string): void {
  if (st.isSymbolicLink()) throw new LockPathError("lock_file_symlink", `${label} is a symlink; a lock file must be a regular file.`);
  if (!st.isFile()) throw new LockPathError("lock_file_not_regular", `${label} is not a regular file.`);
  if (st.nlink !== 1) {
    throw new LockPathError("lock_file_hard_linked", `${label} has ${st.nlink} hard links; a lock file must have exactly one name.`);
  }
}

/**
 * Opens `file` (which must exist) with busy timeout 0: better-sqlite3's busy handler sleeps
 * synchronously, which would block the event loop; contention is retried by the caller instead.
 */
export function openVerifiedDatabase(file: string, label: string): VerifiedDatabase {
  const before = lstatSync(file);
  assertPlainFile(before, label);
  const db = new Database(file, { fileMustExist: true, timeout: 0 });
  try {
    const after = lstatSync(file);
    assertPlainFile(after, label);
    if (after.ino !== before.ino || after.dev !== before.dev || descriptorOpenOn(before.dev, before.ino) === false) {
      throw new LockPathError("lock_file_replaced", `${label} was replaced while it was being opened.`);
    }
    return { db, dev: before.dev, ino: before.ino };
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The lock's path still names the inode we hold (R-LK-4: nobody replaced the file). */
export function assertStillSameFile(file: string, held: { dev: number; ino: number }, label: string): void {
  let st: Stats;
  try {
    st = lstatSync(file);
  } catch (error) {
    if (isErrno(error, "ENOENT")) throw new LockPathError("lock_file_replaced", `${label} was deleted while in use; lock files must never be removed.`);
    throw error;
  }
  assertPlainFile(st, label);
  if (st.ino !== held.ino || st.dev !== held.dev) {
    throw new LockPathError("lock_file_replaced", `${label} was replaced while in use; lock files must never be replaced or moved.`);
  }
}

const FD_DIRS = ["/proc/self/fd", "/dev/fd"];

/**
 * Whether some descriptor of this process is open on (dev, ino): right after SQLite's open,
 * that descriptor is SQLite's. fstat by number never opens or closes anything. null when the
 * platform offers no descriptor directory (the lstat checks then stand alone).
 */
export function descriptorOpenOn(dev: number, ino: number): boolean | null {
  for (const dir of FD_DIRS) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    // Descending: SQLite's new descriptor is the lowest free number, which in a busy process
    // is usually near the top.
    for (const name of names.sort((a, b) => Number(b) - Number(a))) {
      try {
        const st = fstatSync(Number(name));
        if (st.ino === ino && st.dev === dev) return true;
      } catch {
        // the descriptor of the directory listing itself, already closed
      }
    }
    return false;
  }
  return null;
}

/** The path still names this regular, singly linked inode (lstat only, never opens it). */
export function namesSameFile(file: string, held: { dev: number; ino: number }): boolean {
  try {
    const st = lstatSync(file);
    return st.isFile() && st.nlink === 1 && st.dev === held.dev && st.ino === held.ino;
  } catch {
    return false;
  }
}

const IDLE_KEY = Symbol.for("@copyback/core:directory-merge-locks:idle-lock-connections");
const MAX_IDLE_CONNECTIONS = 64;

function idleConnections(): Map<string, VerifiedDatabase> {
  const holder = globalThis as unknown as Record<symbol, Map<string, VerifiedDatabase> | undefined>;
  return (holder[IDLE_KEY] ??= new Map());
}

/**
 * A verified connection to the lock file for one acquisition. A connection released earlier in
 * this process is reused while the path still names its inode (opening and verifying a new one
 * is most of an uncontended acquire's cost); otherwise a new one is opened with every check.
 * An idle connection has no transaction, so it holds no lock (R-LK-2: the open transaction is
 * the lock); the per-process FIFO keeps one connection per lock file in use at a time.
 */
export function takeLockConnection(file: string, label: string): VerifiedDatabase {
  const cache = idleConnections();
  const idle = cache.get(file);
  if (idle) {
    cache.delete(file);
    if (idle.db.open && !idle.db.inTransaction && namesSameFile(file, idle)) return idle;
    if (idle.db.open) idle.db.close(); // the file was replaced or re-linked: check a new open
  }
  createFileIfMissing(file);
  return openVerifiedDatabase(file, label);
}

/** Keeps a connection whose transaction has ended for the next acquisition (bounded, LRU). */
export function putBackLockConnection(file: string, lock: VerifiedDatabase): void {
  if (!lock.db.open) return;
  if (lock.db.inTransaction) {
    lock.db.close();
    return;
  }
  const cache = idleConnections();
  cache.get(file)?.db.close();
  cache.delete(file);
  cache.set(file, lock);
  for (const [key, old] of cache) {
    if (cache.size <= MAX_IDLE_CONNECTIONS) break;
    cache.delete(key);
    old.db.close();
  }
}

/** One attempt at the reserved lock (R-LK-2). false: another connection holds it. */
export function tryBeginImmediate(db: Database.Database): boolean {
  try {
    db.exec("BEGIN IMMEDIATE");
    return true;
  } catch (error) {
    if (isSqliteBusy(error)) return false;
    throw error;
  }
}

export function isSqliteBusy(error: unknown): boolean {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}
