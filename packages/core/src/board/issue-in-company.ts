// Company-scoped task lookup: an id from another company reads exactly like a missing one.
import type { PrismaClient, TransactionClient } from "@copyback/db/client";
import { notFound } from "../errors";

export async function requireIssueInCompany(db: PrismaClient | TransactionClient, companyId: string, issueId: string) {
  const issue = await db.issue.findFirst({
    where: { id: issueId, companyId },
    select: { id: true, status: true, statusVersion: true, conversationGeneration: true },
  });
  if (!issue) throw notFound("The issue");
  return issue;
}
