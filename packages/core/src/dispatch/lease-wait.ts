// A busy environment lease (DomainError `lease_busy`: another run holds the one active ephemeral
// lease of this environment and workspace) is retried in process with backoff for a short while
// before the run goes back to the queue. Requeueing at once would make the next pass claim the
// same run again and spin against the busy lease.
import { setTimeout as delay } from "node:timers/promises";
import { isDomainError } from "../errors";

export type LeaseWait<T> = { kind: "acquired"; value: T } | { kind: "busy" };

export async function waitForLease<T>(
  acquire: () => Promise<T>,
  opts: { maxWaitMs: number; signal: AbortSignal; onBusy?: () => Promise<void> | void; initialDelayMs?: number },
): Promise<LeaseWait<T>> {
  const deadline = Date.now() + opts.maxWaitMs;
  let delay = opts.initialDelayMs ?? 250;
  let reported = false;
  for (;;) {
    try {
      return { kind: "acquired", value: await acquire() };
    } catch (error) {
      if (!isDomainError(error) || error.code !== "lease_busy") throw error;
    }
    if (!reported) {
      reported = true;
      await opts.onBusy?.();
    }
    const left = deadline - Date.now();
    if (left <= 0 || opts.signal.aborted) return { kind: "busy" };
    await sleep(Math.min(delay, left), opts.signal);
    delay = Math.min(delay * 2, 4_000);
  }
}

/** Resolves after `ms`, or early (never rejecting) when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}
