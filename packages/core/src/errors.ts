// Typed domain errors. Services throw these; the web shell maps `kind` to a tRPC code and an
// HTTP status in exactly one place (apps/web/src/server/errors.ts). `code` is a stable string
// that clients and tests match on.

// too_large: a request body over a documented cap (HTTP 413).
export type DomainErrorKind = "unauthenticated" | "forbidden" | "not_found" | "conflict" | "invalid" | "too_large" | "unavailable";

export class DomainError extends Error {
  readonly kind: DomainErrorKind;
  readonly code: string;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(kind: DomainErrorKind, code: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "DomainError";
    this.kind = kind;
    this.code = code;
    this.details = details;
  }
}

export const notFound = (what: string) => new DomainError("not_found", "not_found", `${what} was not found.`);
export const conflict = (code: string, message: string, details?: Record<string, unknown>) => new DomainError("conflict", code, message, details);
export const invalid = (code: string, message: string, details?: Record<string, unknown>) => new DomainError("invalid", code, message, details);

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/** The errno code of a Node.js system error (ENOENT, EEXIST, ...), or undefined. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** The stable code of a DomainError; any other error (a provider's, the file system's) gets the caller's fallback code. */
export function codeOf(error: unknown, fallback: string): string {
  return isDomainError(error) ? error.code : fallback;
}

/** An error's message for a failure record or an event: its own message, else its string form. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * A unique-constraint violation reported by the database client (Prisma's known request error
 * P2002): the row another writer inserted first. Recognised by the error's name and code, as
 * database-failure.ts recognises the client's errors, so the kernel stays free of the client.
 */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && error.name === "PrismaClientKnownRequestError" && (error as { code?: unknown }).code === "P2002";
}
