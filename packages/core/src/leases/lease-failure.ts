// The `failure` note recorded on a lease when a provider call for it fails (diagnostics only),
// and the one way the lease services refuse bad input.
import { z } from "zod";
import { codeOf, invalid, messageOf } from "../errors";
import type { LeaseFailure } from "./lease-metadata";

export function failureOf(error: unknown, fallbackCode: string): LeaseFailure {
  return { code: codeOf(error, fallbackCode), message: messageOf(error), at: new Date().toISOString() };
}

/** Parses a service's input; bad input is DomainError invalid `lease_input_invalid` before anything is read or written. */
export function parseLeaseInput<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalid("lease_input_invalid", z.prettifyError(parsed.error));
  return parsed.data;
}
