// `listLocks`: what is in an instance's lock root, for `copyback locks list` and `doctor`.
// Read-only: it creates nothing, follows no symlink, and reads sidecars bounded. "held" is a
// probe of the real lock (BEGIN IMMEDIATE with busy timeout 0, rolled back at once), never the
// sidecar's word (R-LK-3). The probe's own connection is SQLite's, so probing a lock this very
// process holds is safe (SQLite shares per-inode lock state between connections of a process).
import { lstat, readdir } from "node:fs/promises";
import path from "node:path";
import { LockPathError, type LockPathErrorCode } from "./errors";
import { openVerifiedDatabase, tryBeginImmediate } from "./lock-file";
import { LOCK_ROOT_RELATIVE, assertPrivateDirectory, relativeLockName } from "./lock-paths";
import { isErrno, readOwnerSidecar, type OwnerRecord } from "./owner-sidecar";
import { BUSY, DEFAULT_TICKET_HEARTBEAT_MS, DEFAULT_TICKET_STALE_MS, WaiterQueue } from "./waiter-queue";

export type LockState = "free" | "held" | "refused" | "missing";

export interface LockListEntry {
  hash: string;
  lockFile: string;
  /** missing: a sidecar or queue without its lock file (the lock file is created on first use). */
  state: LockState;
  refusal: { code: LockPathErrorCode; message: string } | null;
  /** Sidecar contents, bounded; a claim, not a fact. */
  owner: OwnerRecord;
  /** Live fairness tickets (waiters); null when there is no queue or it was busy. */
  waiters: number | null;
  /** A legacy `<hash>.lock/` exists and blocks this target (R-LK-5). */
  legacyDirectory: boolean;
}

export interface LegacyLockEntry {
  hash: string;
  /** Relative to the instance root. */
  name: string;
  path: string;
  isDirectory: boolean;
  /** Its old `owner.json`, bounded; shown for the operator, never used to judge it dead. */
  owner: OwnerRecord;
}

export interface LockListing {
  lockRoot: string;
  exists: boolean;
  /** Why the lock root itself is refused (symlink, not a directory, group/other writable). */
  rootProblem: { code: string; message: string } | null;
  locks: LockListEntry[];
  legacyDirectories: LegacyLockEntry[];
  /** Names in the lock root that belong to no lock (left for the operator). */
  strayNames: string[];
}

const NAME = /^([0-9a-f]{64})(\.lock\.sqlite|\.lock\.owner\.json|\.queue\.sqlite|\.queue\.sqlite-wal|\.queue\.sqlite-shm|\.queue\.sqlite-journal|\.lock\.sqlite-journal|\.lock)$/;

export interface ListLocksOptions {
  /** Must match the writers' DirectoryMergeLocks option to count live waiters alike. */
  ticketStaleMs?: number;
}

export async function listLocks(instanceRoot: string, opts: ListLocksOptions = {}): Promise<LockListing> {
  const lockRoot = path.join(path.resolve(instanceRoot), LOCK_ROOT_RELATIVE);
  const listing: LockListing = { lockRoot, exists: false, rootProblem: null, locks: [], legacyDirectories: [], strayNames: [] };
  try {
    assertPrivateDirectory(path.dirname(lockRoot));
    assertPrivateDirectory(lockRoot);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return listing;
    if (error instanceof LockPathError) {
      listing.rootProblem = { code: error.code, message: error.message };
      return listing;
    }
    throw error;
  }
  listing.exists = true;

  const byHash = new Map<string, Set<string>>();
  for (const name of (await readdir(lockRoot)).sort()) {
    const match = NAME.exec(name);
    if (!match?.[1] || !match[2]) {
      listing.strayNames.push(name);
      continue;
    }
    const kinds = byHash.get(match[1]) ?? new Set<string>();
    kinds.add(match[2]);
    byHash.set(match[1], kinds);
  }

  for (const [hash, kinds] of [...byHash].sort(([a], [b]) => a.localeCompare(b))) {
    const legacy = kinds.has(".lock");
    if (legacy) listing.legacyDirectories.push(await describeLegacy(lockRoot, hash));
    if (!kinds.has(".lock.sqlite") && !kinds.has(".lock.owner.json") && !kinds.has(".queue.sqlite")) continue;
    const lockFile = path.join(lockRoot, `${hash}.lock.sqlite`);
    const entry: LockListEntry = {
      hash,
      lockFile,
      state: "missing",
      refusal: null,
      owner: await readOwnerSidecar(path.join(lockRoot, `${hash}.lock.owner.json`)),
      waiters: null,
      legacyDirectory: legacy,
    };
    if (kinds.has(".lock.sqlite")) probe(entry, hash);
    if (kinds.has(".queue.sqlite")) entry.waiters = countWaiters(path.join(lockRoot, `${hash}.queue.sqlite`), hash, opts.ticketStaleMs ?? DEFAULT_TICKET_STALE_MS);
    listing.locks.push(entry);
  }
  return listing;
}

/** held/free by trying the real lock; refusals keep their stable code. */
function probe(entry: LockListEntry, hash: string): void {
  try {
    const { db } = openVerifiedDatabase(entry.lockFile, relativeLockName(hash, ".lock.sqlite"));
    try {
      if (tryBeginImmediate(db)) {
        db.exec("ROLLBACK");
        entry.state = "free";
      } else {
        entry.state = "held";
      }
    } finally {
      db.close();
    }
  } catch (error) {
    if (!(error instanceof LockPathError)) throw error;
    entry.state = "refused";
    entry.refusal = { code: error.code, message: error.message };
  }
}

function countWaiters(queueFile: string, hash: string, staleMs: number): number | null {
  let queue: WaiterQueue;
  try {
    queue = WaiterQueue.open(queueFile, `${LOCK_ROOT_RELATIVE}/${hash}.queue.sqlite`, { heartbeatMs: DEFAULT_TICKET_HEARTBEAT_MS, staleMs });
  } catch {
    return null;
  }
  try {
    const count = queue.liveCount(Date.now());
    return count === BUSY ? null : count;
  } catch {
    return null;
  }
}

async function describeLegacy(lockRoot: string, hash: string): Promise<LegacyLockEntry> {
  const dir = path.join(lockRoot, `${hash}.lock`);
  const st = await lstat(dir);
  const owner = st.isDirectory()
    ? await readOwnerSidecar(path.join(dir, "owner.json"))
    : { status: "not_regular" as const, pid: null, createdAt: null, hostname: null, target: null };
  return { hash, name: relativeLockName(hash, ".lock/"), path: dir, isDirectory: st.isDirectory(), owner };
}
