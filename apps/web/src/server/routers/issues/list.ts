import { z } from "zod";
import type { Prisma } from "@copyback/db/client";
import { openActionsByIssue, deriveTaskNotice, type TaskNotice } from "@copyback/core/recovery";
import { companyProcedure } from "~/server/trpc";
import { issueStatusSchema } from "./issue-status-schema";
import { cursorSchema, pageOf } from "./keyset-cursor";

export const listIssuesInput = z.object({
  /** Only these statuses (any of them); absent or empty = every status. */
  status: z.array(issueStatusSchema).max(7).optional(),
  /** An agent id, or "unassigned"; absent = anyone. */
  assignee: z.union([z.uuid(), z.literal("unassigned")]).optional(),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const issueListItem = z.object({
  id: z.uuid(),
  identifier: z.string(),
  title: z.string(),
  status: issueStatusSchema,
  lastActivityAt: z.date(),
  assignee: z.object({ id: z.uuid(), name: z.string() }).nullable(),
  /** The recovery chip: the task's notice (core's deriveTaskNotice), null when it has none. */
  recovery: z
    .object({ kind: z.enum(["attention", "restoring"]), label: z.string() })
    .nullable(),
});

export const listIssuesOutput = z.object({
  items: z.array(issueListItem),
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: z.string().nullable(),
});

/**
 * The issues board: newest activity first, filtered in the database. Served by the indexes on
 * (company_id, last_activity_at) and (company_id, status); keyset pages keep deep pages as cheap
 * as the first one with 10,000 issues in a company.
 */
export const listIssues = companyProcedure("issues:read")
  .input(listIssuesInput)
  .output(listIssuesOutput)
  .query(async ({ ctx, input }) => {
    const where: Prisma.IssueWhereInput = { companyId: ctx.companyId };
    if (input.status && input.status.length > 0) where.status = { in: input.status };
    if (input.assignee)
      where.assigneeAgentId = input.assignee === "unassigned" ? null : input.assignee;
    if (input.cursor) {
      // `lte` bounds the index range scan; the OR breaks ties between equal timestamps by id.
      where.lastActivityAt = { lte: input.cursor.at };
      where.OR = [{ lastActivityAt: { lt: input.cursor.at } }, { id: { lt: input.cursor.id } }];
    }
    const rows = await ctx.db.issue.findMany({
      where,
      orderBy: [{ lastActivityAt: "desc" }, { id: "desc" }],
      take: input.limit + 1,
      select: {
        id: true,
        identifier: true,
        title: true,
        status: true,
        lastActivityAt: true,
        assigneeAgent: { select: { id: true, name: true } },
      },
    });
    const page = pageOf(rows, input.limit, (row) => row.lastActivityAt);
    // One query for the page's open recovery actions, served by the open-action index.
    const actions = await openActionsByIssue(
      ctx.db,
      ctx.companyId,
      page.items.map((row) => row.id),
    );
    return {
      items: page.items.map(({ assigneeAgent, ...row }) => ({
        ...row,
        assignee: assigneeAgent,
        recovery: chipOf(deriveTaskNotice(actions.get(row.id) ?? [])),
      })),
      nextCursor: page.nextCursor,
    };
  });

/** The board's short words for a task's notice. */
function chipOf(notice: TaskNotice): { kind: "attention" | "restoring"; label: string } | null {
  switch (notice.kind) {
    case "none":
      return null;
    case "restoring":
      return { kind: "restoring", label: notice.message };
    case "attention":
      return { kind: "attention", label: "Needs attention" };
  }
}
