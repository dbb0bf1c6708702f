import { TRPCClientError } from "@trpc/client";

/** The stable domain code of a failed call ("stale_status_version", "last_owner", …), if any. */
export function domainCodeOf(error: unknown): string | null {
  if (error instanceof TRPCClientError) {
    const data = error.data as { domainCode?: unknown } | undefined;
    return typeof data?.domainCode === "string" ? data.domainCode : null;
  }
  return null;
}

/**
 * A sentence for board users. Domain errors carry one written for them; anything else gets a
 * generic line (never a stack trace or an internal message).
 */
export function userMessageOf(error: unknown): string {
  if (error instanceof TRPCClientError) {
    const data = error.data as
      | { code?: string; zodError?: { fieldErrors?: Record<string, string[] | undefined> } | null }
      | undefined;
    const fieldMessage = Object.values(data?.zodError?.fieldErrors ?? {}).flat()[0];
    if (fieldMessage) return fieldMessage;
    if (
      domainCodeOf(error) ||
      data?.code === "FORBIDDEN" ||
      data?.code === "NOT_FOUND" ||
      data?.code === "CONFLICT"
    )
      return error.message;
    if (data?.code === "UNAUTHORIZED") return "Your session has ended. Sign in again.";
  }
  return "Something went wrong. Try again in a moment.";
}
