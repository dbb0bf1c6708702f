// Coalesces bursts of changes (a run writing many events, a bulk update) into one refresh:
// the first change waits `windowMs` for company, and refreshes are at least `minIntervalMs`
// apart, so an open page re-reads at most about once a second however busy the worker is.

export interface RefreshBatch {
  /** Router namespaces to invalidate; empty when `everything` is set. */
  routers: ReadonlySet<string>;
  /** Re-read everything (after a reconnect, when changes may have been missed). */
  everything: boolean;
}

export interface RefreshBatcherOptions {
  flush: (batch: RefreshBatch) => void;
  windowMs?: number;
  minIntervalMs?: number;
  now?: () => number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

export interface RefreshBatcher {
  add(routers: readonly string[]): void;
  everything(): void;
  cancel(): void;
}

export function createRefreshBatcher(options: RefreshBatcherOptions): RefreshBatcher {
  const windowMs = options.windowMs ?? 200;
  const minIntervalMs = options.minIntervalMs ?? 1_000;
  const now = options.now ?? Date.now;
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer =
    options.clearTimer ?? ((handle) => clearTimeout(handle as ReturnType<typeof setTimeout>));

  let pending = new Set<string>();
  let everything = false;
  let timer: unknown;
  let lastFlush = Number.NEGATIVE_INFINITY;

  const flush = () => {
    timer = undefined;
    const batch: RefreshBatch = { routers: everything ? new Set() : pending, everything };
    pending = new Set();
    everything = false;
    lastFlush = now();
    options.flush(batch);
  };
  const schedule = () => {
    if (timer !== undefined) return;
    timer = setTimer(flush, Math.max(windowMs, lastFlush + minIntervalMs - now()));
  };

  return {
    add(routers) {
      if (routers.length === 0) return;
      for (const router of routers) pending.add(router);
      schedule();
    },
    everything() {
      everything = true;
      schedule();
    },
    cancel() {
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
      pending = new Set();
      everything = false;
    },
  };
}
