// The `failure` note recorded on a lease when a provider call for it fails (diagnostics only).
import { isDomainError } from "../errors";
import type { LeaseFailure } from "./lease-metadata";

export function failureOf(error: unknown, fallbackCode: string): LeaseFailure {
  return { code: isDomainError(error) ? error.code : fallbackCode, message: messageOf(error), at: new Date().toISOString() };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
