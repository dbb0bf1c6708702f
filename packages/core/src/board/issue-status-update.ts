// Moving a task to another status, with optimistic concurrency on `status_version`: the update
// only matches the version the caller saw, so two people moving the same task cannot silently
// overwrite each other. The loser gets CONFLICT `stale_status_version` and nothing changes. The
// audit row commits with the change.
import { withTransaction, type IssueStatus, type PrismaClient } from "@copyback/db/client";
import { conflict } from "../errors";
import { recordActivity, type Actor } from "../records/record-activity";
import { requireIssueInCompany } from "./issue-in-company";

export const STALE_STATUS_VERSION = "stale_status_version";

export interface IssueStatusUpdate {
  companyId: string;
  issueId: string;
  status: IssueStatus;
  /** The statusVersion the caller saw; another change since makes this a conflict. */
  expectedStatusVersion: number;
  actor: Actor;
}

export function updateIssueStatus(db: PrismaClient, update: IssueStatusUpdate): Promise<{ status: IssueStatus; statusVersion: number }> {
  return withTransaction(db, async (tx) => {
    const issue = await requireIssueInCompany(tx, update.companyId, update.issueId);
    if (issue.statusVersion !== update.expectedStatusVersion) throw stale(issue.statusVersion);
    if (issue.status === update.status) return { status: issue.status, statusVersion: issue.statusVersion };
    // The version check is repeated in the UPDATE itself: a concurrent writer that committed
    // after our read makes this match nothing instead of overwriting its change.
    const now = new Date();
    const updated = await tx.issue.updateMany({
      where: { id: issue.id, companyId: update.companyId, statusVersion: update.expectedStatusVersion },
      data: { status: update.status, statusVersion: { increment: 1 }, lastActivityAt: now },
    });
    if (updated.count !== 1) {
      const current = await requireIssueInCompany(tx, update.companyId, update.issueId);
      throw stale(current.statusVersion);
    }
    await recordActivity(tx, {
      companyId: update.companyId,
      actor: update.actor,
      action: "issue.status_changed",
      entityType: "issue",
      entityId: issue.id,
      details: { from: issue.status, to: update.status },
    });
    return { status: update.status, statusVersion: update.expectedStatusVersion + 1 };
  });
}

function stale(currentVersion: number) {
  return conflict(STALE_STATUS_VERSION, "Someone changed this task's status meanwhile. Reload to see the current status.", { currentVersion });
}
