// Company-scoped issue lookup: an id from another company reads exactly like a missing one.
import type { PrismaClient, TransactionClient } from "@copyback/db/client";
import { notFound } from "@copyback/core/errors";
import type { Context } from "~/server/trpc";

export async function requireIssueInCompany(
  db: PrismaClient | TransactionClient,
  companyId: string,
  issueId: string,
) {
  const issue = await db.issue.findFirst({
    where: { id: issueId, companyId },
    select: { id: true, status: true, statusVersion: true, conversationGeneration: true },
  });
  if (!issue) throw notFound("The issue");
  return issue;
}

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
