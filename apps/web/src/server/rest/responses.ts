// JSON error bodies of the REST operator API: always `{ code, message }` (plus `issues` for
// validation errors, `details` when a domain error carries some). `code` is the stable string
// clients match on; statuses come from the one DomainError mapping (server/errors.ts).
import type { DomainError } from "@copyback/core/errors";
import { HTTP_STATUS } from "~/server/errors";

export interface RestErrorBody {
  code: string;
  message: string;
  issues?: unknown;
  details?: unknown;
}

export function jsonError(status: number, body: RestErrorBody, headers?: HeadersInit): Response {
  return Response.json(body, { status, headers: { "cache-control": "no-store", ...headersToObject(headers) } });
}

export function domainErrorResponse(error: DomainError): Response {
  return jsonError(HTTP_STATUS[error.kind], {
    code: error.code,
    message: error.message,
    ...(error.details ? { details: error.details } : {}),
  });
}

function headersToObject(headers: HeadersInit | undefined): Record<string, string> {
  return headers ? Object.fromEntries(new Headers(headers).entries()) : {};
}
