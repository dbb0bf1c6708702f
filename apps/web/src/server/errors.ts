// The one place where domain errors become tRPC errors and HTTP statuses (DESIGN.md section 7).
import { TRPCError, type TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { DomainError, type DomainErrorKind } from "@copyback/core/errors";

const TRPC_CODES: Record<DomainErrorKind, TRPC_ERROR_CODE_KEY> = {
  unauthenticated: "UNAUTHORIZED",
  forbidden: "FORBIDDEN",
  not_found: "NOT_FOUND",
  conflict: "CONFLICT",
  invalid: "UNPROCESSABLE_CONTENT",
  too_large: "PAYLOAD_TOO_LARGE",
  unavailable: "SERVICE_UNAVAILABLE",
};

export const HTTP_STATUS: Record<DomainErrorKind, number> = {
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid: 422,
  too_large: 413,
  unavailable: 503,
};

export function toTRPCError(error: DomainError): TRPCError {
  return new TRPCError({ code: TRPC_CODES[error.kind], message: error.message, cause: error });
}

/** The stable domain code of a tRPC error, for the error formatter (clients match on it). */
export function domainCodeOf(error: TRPCError): string | null {
  return error.cause instanceof DomainError ? error.cause.code : null;
}
