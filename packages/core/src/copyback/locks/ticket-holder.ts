// This process's place in a target's cross-process fairness queue (waiter-queue.ts), as the
// front waiter of its FIFO holds it while it polls for the lock (see THE SCHEME in
// directory-merge-lock.ts). The queue orders attempts only; the SQLite lock decides ownership.
import { existsSync } from "node:fs";
import type { LockFiles } from "./lock-paths";
import { BUSY, WaiterQueue, type TicketPolicy } from "./waiter-queue";

/**
 * This process's ticket in the target's queue. Created lazily: an uncontended acquire never
 * writes the queue (and does not even open it while the file does not exist).
 */
export class TicketHolder {
  #queue: WaiterQueue | null = null;
  #ticket: number | null = null;
  #lastHeartbeat = 0;

  constructor(
    private readonly files: LockFiles,
    private readonly policy: TicketPolicy,
  ) {}

  #open(): WaiterQueue {
    this.#queue ??= WaiterQueue.open(this.files.queueFile, `locks/directory-merge/${this.files.hash}.queue.sqlite`, this.policy);
    return this.#queue;
  }

  /** Live tickets ahead of ours; 0 = our turn. A busy queue reads as "not yet" (1). */
  liveAhead(): number {
    if (this.#queue === null && !existsSync(this.files.queueFile)) return 0;
    const queue = this.#open();
    const now = Date.now();
    if (this.#ticket !== null && now - this.#lastHeartbeat >= this.policy.heartbeatMs) {
      const alive = queue.heartbeat(this.#ticket, now);
      if (alive === false) this.#ticket = null; // collected after a long stall: queue again
      if (alive === true) this.#lastHeartbeat = now;
    }
    const ahead = queue.liveAhead(this.#ticket, now);
    return ahead === BUSY ? 1 : ahead;
  }

  /** Takes a place at the back if we have none yet (retried on the next poll when busy). */
  ensureTicket(): void {
    if (this.#ticket !== null) return;
    const now = Date.now();
    const ticket = this.#open().enqueue(process.pid, now);
    if (ticket !== BUSY) {
      this.#ticket = ticket;
      this.#lastHeartbeat = now;
    }
  }

  /**
   * Gives up our place. A busy queue must not leave the ticket behind (the next waiter would
   * wait for it to go stale), so removal is retried on a timer until it succeeds.
   */
  leave(): void {
    const queue = this.#queue;
    const ticket = this.#ticket;
    this.#queue = null;
    this.#ticket = null;
    if (queue === null || ticket === null || queue.remove(ticket) !== BUSY) return;
    const retry = (attempt: number) => {
      try {
        if (queue.remove(ticket) !== BUSY || attempt >= 200) return;
      } catch {
        return; // a broken queue file: the ticket goes stale on its own (fairness only)
      }
      setTimeout(() => retry(attempt + 1), 5 + Math.random() * 10).unref();
    };
    setTimeout(() => retry(1), 5).unref();
  }
}
