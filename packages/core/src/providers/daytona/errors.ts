// Daytona's refusals as the typed errors the rest of copyback knows. Every code starts with
// `provider_` (or is `transfer_dropped`), so copyback/merge/classify.ts treats a failed export
// as a provider or transfer failure: retryable before any host write (R-RR-1). Messages name
// the operation and the status, never the key, a header or a request body.
import { DomainError } from "../../errors";
import { rejectedKeyError } from "./credentials";

/** What the SDK's errors carry (DaytonaError and the axios errors under it). */
interface SdkFailure {
  statusCode?: unknown;
  status?: unknown;
  headers?: unknown;
  code?: unknown;
  message?: unknown;
  response?: { status?: unknown; headers?: unknown };
}

export function statusOf(error: unknown): number | undefined {
  const e = error as SdkFailure | null;
  const status = e?.statusCode ?? e?.status ?? e?.response?.status;
  return typeof status === "number" && status >= 100 && status <= 599 ? status : undefined;
}

export function retryAfterOf(error: unknown): string | undefined {
  const e = error as SdkFailure | null;
  const headers = (e?.headers ?? e?.response?.headers) as { get?: (name: string) => unknown; [key: string]: unknown } | undefined;
  if (!headers || typeof headers !== "object") return undefined;
  const value = typeof headers.get === "function" ? headers.get("retry-after") : headers["retry-after"];
  return typeof value === "string" || typeof value === "number" ? String(value) : undefined;
}

export function sandboxMissing(sandboxId: string): DomainError {
  return new DomainError("not_found", "provider_sandbox_missing", `The Daytona sandbox ${sandboxId} does not exist (any more).`, { sandboxId });
}

/** A transfer that broke or ended short: a transport failure (R-RR-1), never a partial result. */
export function transferDropped(what: string, cause?: unknown): DomainError {
  const error = new DomainError("unavailable", "transfer_dropped", `The Daytona transfer (${what}) broke off before it was complete.`);
  if (cause !== undefined) Object.defineProperty(error, "cause", { value: cause, enumerable: false, writable: true, configurable: true });
  return error;
}

/**
 * What the SDK says of a connection that broke after the request went out: reset or hung up before
 * or during the answer (Node: "socket hang up", "read ECONNRESET", "write EPIPE", "aborted",
 * "Premature close"). A connection never made ("connect ECONNREFUSED", "getaddrinfo ENOTFOUND")
 * or a timeout does not match: that stays provider_daytona_unreachable.
 */
const BROKEN_CONNECTION = /socket hang up|ECONNRESET|EPIPE|\baborted\b|premature close/i;

/**
 * R-RR-1: a download whose connection broke after it was asked for is a dropped transfer
 * (transfer_dropped), not an unreachable Daytona: the SDK reports it as a connection error with
 * no status, which providerErrorOf alone names provider_daytona_unreachable. Both are retried;
 * the code says what happened. Anything else is returned as it is.
 */
export function droppedDownloadOf(error: unknown, what: string): unknown {
  if (!(error instanceof DomainError) || error.code !== "provider_daytona_unreachable") return error;
  const cause = (error as { cause?: unknown }).cause;
  const message = cause instanceof Error ? cause.message : typeof cause === "string" ? cause : "";
  const timedOut = cause instanceof Error && /timeout/i.test(cause.name);
  return !timedOut && BROKEN_CONNECTION.test(message) ? transferDropped(what, cause) : error;
}

export interface ErrorContext {
  what: string;
  variable: string;
  sandboxId?: string | undefined;
}

/** The typed error for a failed SDK call (after the backoff gave up, when it applied). */
export function providerErrorOf(error: unknown, context: ErrorContext): Error {
  if (error instanceof DomainError) return error;
  const status = statusOf(error);
  let mapped: DomainError;
  if (status === 401 || status === 403) mapped = rejectedKeyError(context.variable, status);
  else if (status === 404 && context.sandboxId !== undefined) mapped = sandboxMissing(context.sandboxId);
  else if (status === 429 || (status !== undefined && status >= 500)) {
    mapped = new DomainError("unavailable", "provider_daytona_unavailable", `Daytona did not serve ${context.what} (HTTP ${status}); try again later.`, { status });
  } else if (status !== undefined) {
    mapped = new DomainError("conflict", "provider_daytona_refused", `Daytona refused ${context.what} (HTTP ${status}).`, { status });
  } else {
    const code = (error as SdkFailure | null)?.code;
    mapped = new DomainError("unavailable", "provider_daytona_unreachable", `Daytona could not be reached for ${context.what}${typeof code === "string" ? ` (${code})` : ""}.`);
  }
  Object.defineProperty(mapped, "cause", { value: error, enumerable: false, writable: true, configurable: true });
  return mapped;
}
