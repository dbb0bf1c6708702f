// The export deadline: finalization holds the run's ownership lock (and, once merging, the
// directory-merge lock) while it exports, so a provider that never answers, or a stream that
// stops mid-transfer, must not hold them forever. Each copyback try gets this long for its export
// (the provider calls and the consumption of their streams); then the AbortSignal given to the
// provider and to the stream pipeline aborts, and the try fails with `provider_export_timeout`.
// R-RR-1: that failure comes before any host write and is transient (a provider error): retried
// in process up to three attempts in total, then left retryable for the reconciler.
import { DomainError } from "../errors";

export const DEFAULT_EXPORT_TIMEOUT_MS = 10 * 60_000;
/** setTimeout's largest delay; a longer one would fire at once. */
const MAX_EXPORT_TIMEOUT_MS = 2 ** 31 - 1;

export const EXPORT_TIMEOUT_CODE = "provider_export_timeout";

/** The configured deadline, checked before anything is written (a bad value is the caller's mistake). */
export function exportTimeoutOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_EXPORT_TIMEOUT_MS;
  if (!Number.isInteger(value) || value < 1 || value > MAX_EXPORT_TIMEOUT_MS) {
    throw new DomainError("invalid", "export_timeout_invalid", `The export timeout must be a whole number of milliseconds from 1 to ${MAX_EXPORT_TIMEOUT_MS}, got ${String(value)}.`);
  }
  return value;
}

export function exportTimeoutError(timeoutMs: number): DomainError {
  // The provider_ prefix classifies it as a provider error: retryable before host writes (R-RR-1).
  return new DomainError("unavailable", EXPORT_TIMEOUT_CODE, `The provider's workspace export did not finish within ${timeoutMs} ms.`, { timeoutMs });
}

/**
 * Runs `work` with a signal that aborts after `timeoutMs`. Whatever `work` throws once the
 * deadline passed (an AbortError from a pipeline, the plugin's own error) becomes the timeout
 * error, so the failure has one stable code.
 */
export async function withExportDeadline<T>(timeoutMs: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timeout = exportTimeoutError(timeoutMs);
  const timer = setTimeout(() => controller.abort(timeout), timeoutMs);
  try {
    return await work(controller.signal);
  } catch (error) {
    if (controller.signal.aborted && controller.signal.reason === timeout) throw timeout;
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A provider call that settles by the signal: a plugin that ignores the signal cannot keep the
 * caller waiting. What it returns after the abort is handed to `discard` (a stream is destroyed).
 */
export function untilAborted<T>(call: Promise<T>, signal: AbortSignal | undefined, discard: (late: T) => void): Promise<T> {
  if (!signal) return call;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const onAbort = () => {
      if (done) return;
      done = true;
      reject(signal.reason);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    call.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        if (done) discard(value);
        else {
          done = true;
          resolve(value);
        }
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        if (!done) {
          done = true;
          reject(error);
        }
      },
    );
  });
}
