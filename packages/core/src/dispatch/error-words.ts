// How the executor words a caught error in the run's failure and events: a domain error's stable
// code (else the step's own fallback code), and the error's message.
import { isDomainError } from "../errors";

export function codeOf(error: unknown, fallback: string): string {
  if (isDomainError(error)) return error.code;
  return fallback;
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
