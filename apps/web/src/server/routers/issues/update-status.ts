import { z } from "zod";
import { withTransaction } from "@copyback/db/client";
import { conflict } from "@copyback/core/errors";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";
import { recordActivity } from "../activity/record-activity";
import { issueStatusSchema } from "./issue-status-schema";
import { requireIssueInCompany } from "./load-issue";

export const updateStatusInput = z.object({
  issueId: z.uuid(),
  status: issueStatusSchema,
  /** The statusVersion the caller saw (issues.get); another change since makes this a conflict. */
  expectedStatusVersion: z.number().int().min(0),
});

export const updateStatusOutput = z.object({
  status: issueStatusSchema,
  statusVersion: z.number().int(),
});

export const STALE_STATUS_VERSION = "stale_status_version";

/**
 * Moves a task to another status with optimistic concurrency on `status_version`: the update
 * only matches the version the caller saw, so two people moving the same task cannot silently
 * overwrite each other. The loser gets CONFLICT `stale_status_version` and nothing changes.
 */
export const updateIssueStatus = companyProcedure("issues:write")
  .input(updateStatusInput)
  .output(updateStatusOutput)
  .mutation(({ ctx, input }) => {
    const actor = actorOf(ctx.principal);
    return withTransaction(ctx.db, async (tx) => {
      const issue = await requireIssueInCompany(tx, ctx.companyId, input.issueId);
      if (issue.statusVersion !== input.expectedStatusVersion) throw stale(issue.statusVersion);
      if (issue.status === input.status)
        return { status: issue.status, statusVersion: issue.statusVersion };
      // The version check is repeated in the UPDATE itself: a concurrent writer that committed
      // after our read makes this match nothing instead of overwriting its change.
      const now = new Date();
      const updated = await tx.issue.updateMany({
        where: {
          id: issue.id,
          companyId: ctx.companyId,
          statusVersion: input.expectedStatusVersion,
        },
        data: { status: input.status, statusVersion: { increment: 1 }, lastActivityAt: now },
      });
      if (updated.count !== 1) {
        const current = await requireIssueInCompany(tx, ctx.companyId, input.issueId);
        throw stale(current.statusVersion);
      }
      await recordActivity(tx, {
        companyId: ctx.companyId,
        actor,
        action: "issue.status_changed",
        entityType: "issue",
        entityId: issue.id,
        details: { from: issue.status, to: input.status },
      });
      return { status: input.status, statusVersion: input.expectedStatusVersion + 1 };
    });
  });

function stale(currentVersion: number) {
  return conflict(
    STALE_STATUS_VERSION,
    "Someone changed this task's status meanwhile. Reload to see the current status.",
    { currentVersion },
  );
}
