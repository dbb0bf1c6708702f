// Company-scoped issue lookup (core's board/issue-in-company.ts): an id from another company reads
// exactly like a missing one.
import { requireIssueInCompany } from "@copyback/core/board";
import type { Context } from "~/server/trpc";

/**
 * requireIssueInCompany for read procedures, once per request: the procedures a page calls
 * side by side share one lookup (Context.requestReads). Mutations use requireIssueInCompany,
 * inside their transactions.
 */
export function readIssueInCompany(
  ctx: Pick<Context, "db" | "requestReads"> & { companyId: string },
  issueId: string,
): ReturnType<typeof requireIssueInCompany> {
  const key = `issue:${ctx.companyId}:${issueId}`;
  const known = ctx.requestReads?.get(key) as ReturnType<typeof requireIssueInCompany> | undefined;
  if (known) return known;
  const lookup = requireIssueInCompany(ctx.db, ctx.companyId, issueId);
  ctx.requestReads?.set(key, lookup);
  return lookup;
}
