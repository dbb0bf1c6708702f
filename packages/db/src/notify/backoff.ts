// Reconnect delays: exponential with full jitter, capped. Jitter matters because every web
// process of a deployment loses its LISTEN connection at the same moment when the database
// restarts; without it they would all reconnect in the same instant, again and again.

export interface BackoffOptions {
  /** Delay before the first retry (default 250 ms). */
  initialMs?: number;
  /** Upper bound of any delay (default 10 s). */
  maxMs?: number;
}

/**
 * The delay before retry number `attempt` (0 for the first retry): a uniformly random value in
 * [base/2, base], base = min(maxMs, initialMs * 2^attempt). `random` is injectable for tests.
 */
export function reconnectDelayMs(
  attempt: number,
  options: BackoffOptions = {},
  random: () => number = Math.random,
): number {
  const initial = options.initialMs ?? 250;
  const max = options.maxMs ?? 10_000;
  if (!(initial > 0) || !(max >= initial))
    throw new RangeError(`backoff needs 0 < initialMs <= maxMs (got ${initial}, ${max})`);
  const exponent = Math.min(Math.max(0, Math.trunc(attempt)), 30);
  const base = Math.min(max, initial * 2 ** exponent);
  return Math.round(base / 2 + random() * (base / 2));
}
