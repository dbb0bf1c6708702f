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
