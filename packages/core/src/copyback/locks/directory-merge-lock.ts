// Directory-merge write locks (R-LK-1..R-LK-5): one writer at a time per canonical target.
//
// THE SCHEME
//  Files, in `<instanceRoot>/locks/directory-merge/` (0700, never a symlink), per target
//  <hash> = sha256(canonical target):
//   <hash>.lock.sqlite      permanent, never deleted, replaced or moved (R-LK-4): its inode IS
//                           the lock. Ownership = an open `BEGIN IMMEDIATE` transaction on it,
//                           i.e. SQLite's reserved POSIX lock, held for the whole write (R-LK-2).
//                           Closing the connection releases it; so does the kernel when the
//                           process exits or is killed. Nothing else ever grants ownership.
//   <hash>.lock.owner.json  {pid, createdAt, hostname, target}: written after acquiring, removed
//                           before releasing; diagnostics only, never trusted (R-LK-3).
//   <hash>.queue.sqlite     waiter tickets, for fairness only (see below).
//   <hash>.lock/            legacy directory lock: blocks admission, always (R-LK-5).
//
//  Acquire: resolve the target canonically (lock-paths.ts), enter the per-process FIFO for the
//  lock file, open the lock file with symlink/hard-link/replacement checks (lock-file.ts), then
//  loop: if no legacy directory exists and it is this waiter's turn, try BEGIN IMMEDIATE with
//  busy timeout 0. On success re-check (same inode, still no legacy directory), write the
//  sidecar and return the lease. Otherwise take a ticket (once), sleep a jittered exponential
//  backoff on a timer, and retry until the deadline (30 s by default): the event loop is never
//  blocked. At the deadline: LockTimeoutError with the bounded sidecar contents.
//
//  Fairness. SQLite has no queue: after a release, whichever poller comes first wins, so an
//  early waiter could lose to a stream of later ones forever. Two queues fix that:
//   - per process, a FIFO per lock file (process-fifo.ts): only its front waiter takes part in
//     the cross-process protocol, in arrival order (this also keeps a single connection per
//     lock file in the process, which POSIX record locks require);
//   - across processes, tickets in <hash>.queue.sqlite (waiter-queue.ts): a waiter that finds
//     the lock busy (or other live tickets) takes a ticket; only the oldest live ticket may
//     attempt the lock; tickets carry heartbeats, and one whose owner died or froze is skipped
//     once stale. A waiter removes its ticket when it acquires, times out or is aborted.
//  The ticket queue orders attempts; it never decides ownership. A stale or forged ticket can
//  only delay or hasten an attempt that the SQLite lock still arbitrates. With no queue file
//  (never contended) or no live ticket, a newcomer attempts at once (the uncontended fast path).
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import { DomainError } from "../../errors";
import { jittered, nextDelay, sleep, turnPollDelay, type BackoffPolicy } from "./backoff";
import { LockAbortedError, LockTimeoutError, shortHash } from "./errors";
import { assertLockableFilesystem } from "./filesystem";
import { legacyLockPresent } from "./legacy-lock";
import { assertStillSameFile, putBackLockConnection, takeLockConnection, tryBeginImmediate, type VerifiedDatabase } from "./lock-file";
import { assertTargetOutsideLockRoot, canonicalTarget, ensureLockRoot, hashTarget, lockFilesFor, relativeLockName, type LockFiles } from "./lock-paths";
import { removeOwnerSidecar, writeOwnerSidecar } from "./owner-sidecar";
import { FifoAbortedError, FifoTimeoutError, processFifo } from "./process-fifo";
import { TicketHolder } from "./ticket-holder";
import { timeoutError, type Wait } from "./wait-timeout";
import { DEFAULT_TICKET_HEARTBEAT_MS, DEFAULT_TICKET_STALE_MS, type TicketPolicy } from "./waiter-queue";
import { observeMergeLockWait } from "../../metrics/observe";

export const DEFAULT_LOCK_TIMEOUT_MS = 30_000;

export interface DirectoryMergeLocksOptions {
  instanceRoot: string;
  /** How long acquire() waits before LockTimeoutError (R-LK-2: 30 s). */
  timeoutMs?: number;
  /** First retry delay; doubles (with jitter) up to maxPollIntervalMs. */
  pollIntervalMs?: number;
  maxPollIntervalMs?: number;
  /** Fairness-queue ticket heartbeat and stale limit. */
  ticketHeartbeatMs?: number;
  ticketStaleMs?: number;
  /** Refuse network filesystems on first use (default true). */
  checkFilesystem?: boolean;
}

export interface AcquireOptions {
  signal?: AbortSignal;
  /** Overrides the instance's timeout for this call. */
  timeoutMs?: number;
}

export interface DirectoryMergeLease {
  /** The canonical target (realpath) the lock serializes. */
  readonly target: string;
  readonly lockFile: string;
  /** sha256 of the canonical target. */
  readonly hash: string;
  readonly acquiredAt: Date;
  /** true until release() (the transaction is open). */
  readonly held: boolean;
  /** Throws `directory_merge_lock_not_held` unless held and the lock file is still the same inode. */
  assertHeld(): void;
  /** Removes the sidecar, then ends the transaction and closes the connection. Idempotent. */
  release(): Promise<void>;
}

const PROCESS_LABEL = { pid: process.pid, hostname: hostname() };

export class DirectoryMergeLocks {
  readonly instanceRoot: string;
  readonly timeoutMs: number;
  readonly #backoff: BackoffPolicy;
  readonly #tickets: TicketPolicy;
  readonly #checkFilesystem: boolean;
  #filesystemChecked: Promise<unknown> | null = null;

  constructor(opts: DirectoryMergeLocksOptions) {
    this.instanceRoot = opts.instanceRoot;
    this.timeoutMs = nonNegative(opts.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS, "timeoutMs");
    const initialMs = positive(opts.pollIntervalMs ?? 10, "pollIntervalMs");
    this.#backoff = { initialMs, maxMs: Math.max(initialMs, positive(opts.maxPollIntervalMs ?? 100, "maxPollIntervalMs")), factor: 2 };
    const heartbeatMs = positive(opts.ticketHeartbeatMs ?? DEFAULT_TICKET_HEARTBEAT_MS, "ticketHeartbeatMs");
    this.#tickets = { heartbeatMs, staleMs: Math.max(heartbeatMs * 2, positive(opts.ticketStaleMs ?? DEFAULT_TICKET_STALE_MS, "ticketStaleMs")) };
    this.#checkFilesystem = opts.checkFilesystem ?? true;
  }

  async acquire(target: string, opts: AcquireOptions = {}): Promise<DirectoryMergeLease> {
    // The lock-wait histogram: how long writers wait for a host workspace, and how often they give up.
    const started = performance.now();
    try {
      const lease = await this.#acquire(target, opts, started);
      observeMergeLockWait((performance.now() - started) / 1000, "acquired");
      return lease;
    } catch (error) {
      const outcome = error instanceof LockAbortedError ? "aborted" : error instanceof LockTimeoutError ? "timeout" : "error";
      observeMergeLockWait((performance.now() - started) / 1000, outcome);
      throw error;
    }
  }

  async #acquire(target: string, opts: AcquireOptions, started: number): Promise<DirectoryMergeLease> {
    const timeoutMs = nonNegative(opts.timeoutMs ?? this.timeoutMs, "timeoutMs");
    const { signal } = opts;
    if (signal?.aborted) throw new LockAbortedError(null, signal.reason);
    const lockRoot = ensureLockRoot(this.instanceRoot);
    await this.#assertFilesystem(lockRoot);
    const canonical = await canonicalTarget(target);
    assertTargetOutsideLockRoot(canonical, lockRoot); // R-LK-1
    const files = lockFilesFor(lockRoot, hashTarget(canonical));
    const wait: Wait = { files, target: canonical, started, timeoutMs, signal, reason: "held", ahead: null };

    let leave: () => void;
    try {
      leave = await processFifo().enter(files.lockFile, timeoutMs - (performance.now() - started), signal);
    } catch (error) {
      if (error instanceof FifoTimeoutError) throw await timeoutError(wait);
      if (error instanceof FifoAbortedError) throw new LockAbortedError(files.hash, error.reason);
      throw error;
    }
    try {
      const lock = await this.#acquireAcrossProcesses(wait);
      return new Lease(canonical, files, lock, leave);
    } catch (error) {
      leave();
      throw error;
    }
  }

  async withLock<T>(target: string, fn: (lease: DirectoryMergeLease) => Promise<T>, opts?: AcquireOptions): Promise<T> {
    const lease = await this.acquire(target, opts);
    try {
      return await fn(lease);
    } finally {
      await lease.release();
    }
  }

  #assertFilesystem(lockRoot: string): Promise<unknown> {
    if (!this.#checkFilesystem) return Promise.resolve();
    this.#filesystemChecked ??= assertLockableFilesystem(lockRoot).catch((error: unknown) => {
      this.#filesystemChecked = null; // checked again next time, not remembered as fine
      throw error;
    });
    return this.#filesystemChecked;
  }

  /** The front waiter of this process: tickets, attempts, backoff (see THE SCHEME). */
  async #acquireAcrossProcesses(wait: Wait): Promise<VerifiedDatabase> {
    const { files } = wait;
    const lockLabel = relativeLockName(files.hash, ".lock.sqlite");
    const lock = takeLockConnection(files.lockFile, lockLabel);
    const waiting = new TicketHolder(files, this.#tickets);
    let delay = this.#backoff.initialMs;
    let wasMyTurn = false;
    let nextInLineSince: number | null = null;
    try {
      for (;;) {
        if (wait.signal?.aborted) throw new LockAbortedError(files.hash, wait.signal.reason);
        const ahead = waiting.liveAhead(); // also keeps our ticket's heartbeat fresh
        wait.ahead = ahead;
        if (legacyLockPresent(files.legacyDir)) {
          wait.reason = "legacy_lock_directory"; // R-LK-5: whatever its PID or age
        } else {
          const myTurn = ahead === 0;
          if (myTurn && !wasMyTurn) delay = this.#backoff.initialMs; // just reached the front
          wasMyTurn = myTurn;
          if (!myTurn) {
            wait.reason = "queued";
          } else if (!tryBeginImmediate(lock.db)) {
            wait.reason = "held";
          } else if (this.#admitted(lock, files, lockLabel)) {
            waiting.leave();
            writeOwnerSidecar(files.ownerFile, { pid: PROCESS_LABEL.pid, createdAt: new Date().toISOString(), hostname: PROCESS_LABEL.hostname, target: wait.target });
            return lock;
          } else {
            wait.reason = "legacy_lock_directory";
          }
        }
        waiting.ensureTicket();
        const remaining = wait.timeoutMs - (performance.now() - wait.started);
        if (remaining <= 0) throw await timeoutError(wait);
        // Next in line: poll by how long we have been there (turnPollDelay), so a release is
        // noticed in a millisecond or two after a short hold; further back: plain backoff.
        const nextInLine = wait.ahead !== null && wait.ahead <= 1;
        if (!nextInLine) nextInLineSince = null;
        else nextInLineSince ??= performance.now();
        const pause = nextInLineSince !== null ? turnPollDelay(performance.now() - nextInLineSince, this.#backoff) : delay;
        try {
          await sleep(Math.min(jittered(pause), remaining), wait.signal);
        } catch (reason) {
          throw new LockAbortedError(files.hash, reason);
        }
        delay = nextDelay(delay, this.#backoff);
      }
    } catch (error) {
      waiting.leave();
      if (lock.db.inTransaction) lock.db.exec("ROLLBACK");
      lock.db.close();
      throw error;
    }
  }

  /**
   * Checks made while holding the reserved lock, where they are authoritative: the lock file is
   * still the inode we locked (else another writer could lock the new file: refuse loudly), and
   * no legacy directory appeared (else back off and keep waiting).
   */
  #admitted(lock: VerifiedDatabase, files: LockFiles, label: string): boolean {
    try {
      assertStillSameFile(files.lockFile, lock, label);
    } catch (error) {
      lock.db.exec("ROLLBACK");
      throw error;
    }
    if (legacyLockPresent(files.legacyDir)) {
      lock.db.exec("ROLLBACK");
      return false;
    }
    return true;
  }
}

class Lease implements DirectoryMergeLease {
  readonly acquiredAt = new Date();
  #released = false;

  constructor(
    readonly target: string,
    private readonly files: LockFiles,
    private readonly lock: VerifiedDatabase,
    private readonly leaveFifo: () => void,
  ) {}

  get lockFile(): string {
    return this.files.lockFile;
  }

  get hash(): string {
    return this.files.hash;
  }

  get held(): boolean {
    return !this.#released && this.lock.db.inTransaction;
  }

  assertHeld(): void {
    if (!this.held) {
      throw new DomainError("conflict", "directory_merge_lock_not_held", `The directory-merge lock ${shortHash(this.files.hash)} is no longer held.`);
    }
    assertStillSameFile(this.files.lockFile, this.lock, relativeLockName(this.files.hash, ".lock.sqlite"));
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    // Sidecar first, while still holding: a sidecar removed after the release could be the
    // next holder's (R-LK-3, R-LK-4: the lock file itself stays).
    removeOwnerSidecar(this.files.ownerFile);
    try {
      // Ending the transaction releases the lock (R-LK-2); the idle connection is kept for
      // this process's next acquisition (closed instead if the rollback failed).
      if (this.lock.db.inTransaction) this.lock.db.exec("ROLLBACK");
    } finally {
      putBackLockConnection(this.files.lockFile, this.lock);
      this.leaveFifo();
    }
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new DomainError("invalid", "invalid_lock_option", `${name} must be a positive number of milliseconds.`);
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new DomainError("invalid", "invalid_lock_option", `${name} must be zero or a positive number of milliseconds.`);
  return value;
}
