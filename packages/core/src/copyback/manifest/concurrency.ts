// Bounded concurrency for filesystem work. libuv runs fs calls on a small thread pool; a few
// more requests in flight than threads keeps it busy without queueing thousands of them.

export const DEFAULT_FS_CONCURRENCY = 16;

/** A limiter for leaf operations. Never call it recursively from inside a limited task. */
export function createLimiter(concurrency: number): <T>(task: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= concurrency) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await task();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}

/**
 * Runs `fn` over `items` with at most `concurrency` in flight. On the first failure it starts
 * nothing new and waits for what is already running before rethrowing: a caller that then
 * releases a lock must not leave writes running behind it.
 */
export async function runPool<T>(
  items: readonly T[],
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (failure === undefined && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, worker),
  );
  if (failure !== undefined) throw failure.error;
}
