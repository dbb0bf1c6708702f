// Waiting policy of lock contenders: exponential backoff with jitter, slept on a timer so the
// event loop keeps running (R-LK-2). Pure functions apart from `sleep`.

export interface BackoffPolicy {
  initialMs: number;
  maxMs: number;
  factor: number;
}

export function nextDelay(previousMs: number, policy: BackoffPolicy): number {
  return Math.min(policy.maxMs, Math.max(policy.initialMs, previousMs * policy.factor));
}

/**
 * The sleep of a waiter that is next in line (or whose turn it is while another process still
 * holds the lock): an eighth of how long it has been waiting there, between 1 ms and maxMs. A
 * release is noticed within about 1/8 of the hold time, so a short hold hands over in a
 * millisecond or two while a long one costs only a few polls a second.
 */
export function turnPollDelay(nextInLineForMs: number, policy: BackoffPolicy): number {
  return Math.min(policy.maxMs, Math.max(1, nextInLineForMs / 8));
}

/** Half fixed, half random: waiters that collided once do not collide in lockstep again. */
export function jittered(delayMs: number, random: () => number = Math.random): number {
  return delayMs / 2 + random() * (delayMs / 2);
}

/** setTimeout-based sleep that rejects with the signal's reason when aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
