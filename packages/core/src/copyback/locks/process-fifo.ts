// First-in-first-out admission per lock file inside one process. Two reasons:
//  - fairness: waiters of one process are served in arrival order (the cross-process ticket
//    queue then orders processes);
//  - safety: POSIX record locks are per process, so this process must never have a second
//    connection or descriptor on a lock file it holds (closing it would drop the lock). Only
//    the front waiter of a line touches the lock file.
// One instance per process, kept on globalThis so that two copies of this module (a test
// runner and tsx, say) still share it.

export class FifoTimeoutError extends Error {
  constructor() {
    super("timed out in the per-process lock line");
  }
}

export class FifoAbortedError extends Error {
  constructor(readonly reason: unknown) {
    super("aborted in the per-process lock line");
  }
}

interface Entry {
  grant: () => void;
}

export class ProcessFifo {
  readonly #lines = new Map<string, Entry[]>();

  /** Resolves with a `leave` function once every earlier entrant of `key` has left. */
  enter(key: string, waitMs: number, signal?: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) {
        reject(new FifoAbortedError(signal.reason));
        return;
      }
      const line = this.#lines.get(key) ?? [];
      this.#lines.set(key, line);
      let left = false;
      const leave = () => {
        if (left) return;
        left = true;
        this.#remove(key, entry);
      };
      const timers: { timeout?: NodeJS.Timeout } = {};
      const onAbort = () => {
        this.#remove(key, entry);
        clearTimeout(timers.timeout);
        reject(new FifoAbortedError(signal?.reason));
      };
      const entry: Entry = {
        grant: () => {
          clearTimeout(timers.timeout);
          signal?.removeEventListener("abort", onAbort);
          resolve(leave);
        },
      };
      line.push(entry);
      if (line.length === 1) {
        entry.grant();
        return;
      }
      timers.timeout = setTimeout(() => {
        signal?.removeEventListener("abort", onAbort);
        this.#remove(key, entry);
        reject(new FifoTimeoutError());
      }, Math.max(0, waitMs));
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Entrants of `key` (the admitted one first); for diagnostics and tests. */
  size(key: string): number {
    return this.#lines.get(key)?.length ?? 0;
  }

  #remove(key: string, entry: Entry): void {
    const line = this.#lines.get(key);
    if (!line) return;
    const index = line.indexOf(entry);
    if (index < 0) return;
    line.splice(index, 1);
    if (line.length === 0) {
      this.#lines.delete(key);
      return;
    }
    if (index === 0) line[0]?.grant();
  }
}

const GLOBAL_KEY = Symbol.for("@copyback/core:directory-merge-locks:process-fifo");

export function processFifo(): ProcessFifo {
  const holder = globalThis as unknown as Record<symbol, ProcessFifo | undefined>;
  return (holder[GLOBAL_KEY] ??= new ProcessFifo());
}
