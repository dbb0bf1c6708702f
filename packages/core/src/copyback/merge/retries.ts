// R-RR-1: a copyback that fails before writing any host file is tried up to three times in
// total, with a short backoff; a final failure (see classify.ts) is rethrown at once. Callers
// restoring into a throwaway directory pass `retries: false` and get exactly one attempt.
import { classifyCopybackFailure, type CopybackFailureClass } from "./classify";

export const MAX_COPYBACK_ATTEMPTS = 3;
const DEFAULT_BACKOFF_MS = 250;

export interface CopybackRetryOptions {
  /** false: one attempt only (throwaway-directory restores). Default true. */
  retries?: boolean;
  /** 1 to 3 (default 3). */
  maxAttempts?: number;
  /** First delay; each later one is four times longer (250 ms, 1 s by default). */
  backoffMs?: number;
  /** Observes each retry decision (for run logs). */
  onRetry?(info: {
    attempt: number;
    delayMs: number;
    error: unknown;
    failure: CopybackFailureClass;
  }): void;
  /** Test seam for the backoff wait. */
  sleep?(ms: number): Promise<void>;
}

export async function runWithCopybackRetries<T>(
  fn: (attempt: number) => Promise<T>,
  opts: CopybackRetryOptions = {},
): Promise<T> {
  const maxAttempts = opts.retries === false ? 1 : (opts.maxAttempts ?? MAX_COPYBACK_ATTEMPTS);
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > MAX_COPYBACK_ATTEMPTS) {
    throw new RangeError(`maxAttempts must be an integer from 1 to ${MAX_COPYBACK_ATTEMPTS}`);
  }
  const backoffMs = opts.backoffMs ?? DEFAULT_BACKOFF_MS;
  if (!Number.isFinite(backoffMs) || backoffMs < 0)
    throw new RangeError("backoffMs must be a non-negative number");
  const sleep =
    opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (error) {
      const failure = classifyCopybackFailure(error);
      if (!failure.retryable || attempt >= maxAttempts) throw error;
      const delayMs = backoffMs * 4 ** (attempt - 1);
      opts.onRetry?.({ attempt, delayMs, error, failure });
      await sleep(delayMs);
    }
  }
}
