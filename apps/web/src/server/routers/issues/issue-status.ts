// The task statuses as a plain list, shared by the router and the pages (filters, selects).
// No runtime imports: client components import this file, and it must not pull zod or Prisma in.
import type { IssueStatus } from "@copyback/db/client";

export const ISSUE_STATUSES = [
  "backlog",
  "todo",
  "in_progress",
  "in_review",
  "blocked",
  "done",
  "cancelled",
] as const;

export type IssueStatusValue = (typeof ISSUE_STATUSES)[number];

export function isIssueStatus(value: unknown): value is IssueStatusValue {
  return typeof value === "string" && (ISSUE_STATUSES as readonly string[]).includes(value);
}

// Compile-time guard: the list above is exactly the database enum (a new status fails here).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _sameAsDatabase: Same<IssueStatusValue, IssueStatus> = true;
void _sameAsDatabase;
