import { z } from "zod";
import {
  listOpenActionsForCompany,
  noticeActionsOf,
  deriveTaskNotice,
} from "@copyback/core/recovery";
import { companyProcedure } from "~/server/trpc";
import { issueStatusSchema } from "../issues/issue-status-schema";
import { cursorSchema, pageOf } from "../issues/keyset-cursor";
import { causeInWords } from "./recovery-words";

export const listOpenRecoveryInput = z.object({
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const openRecoveryItem = z.object({
  actionId: z.uuid(),
  issue: z.object({ id: z.uuid(), identifier: z.string(), title: z.string(), status: issueStatusSchema }),
  cause: z.string(),
  causeInWords: z.string(),
  /** This action's own notice (deriveTaskNotice of it alone): waiting for a person, or restoring. */
  state: z.enum(["attention", "restoring"]),
  /** The age is shown from this. */
  createdAt: z.date(),
  nextAction: z.string().nullable(),
  runId: z.uuid().nullable(),
});

export const listOpenRecoveryOutput = z.object({
  items: z.array(openRecoveryItem),
  /** Pass back as `cursor` for the next page; null on the last page. */
  nextCursor: z.string().nullable(),
});

/**
 * The company's Recovery page: every open recovery action across its tasks, oldest first (the
 * one waiting longest leads), keyset-paged by (created_at, id). Carries no evidence at all, so
 * nothing of a recorded controller can reach it (R-UI-1).
 */
export const listOpenRecovery = companyProcedure("issues:read")
  .input(listOpenRecoveryInput)
  .output(listOpenRecoveryOutput)
  .query(async ({ ctx, input }) => {
    const rows = await listOpenActionsForCompany(ctx.db, ctx.companyId, {
      limit: input.limit + 1,
      ...(input.cursor ? { after: { createdAt: input.cursor.at, id: input.cursor.id } } : {}),
    });
    const page = pageOf(rows, input.limit, (row) => row.createdAt);
    // R-RC-3: a hold whose reconstruction intent is pending reads as continuing, not waiting.
    const noticeActions = await noticeActionsOf(ctx.db, ctx.companyId, page.items);
    return {
      items: page.items.map((row, i) => {
        const notice = deriveTaskNotice([noticeActions[i] as (typeof noticeActions)[number]]);
        return {
          actionId: row.id,
          issue: { id: row.issueId, identifier: row.issue.identifier, title: row.issue.title, status: issueStatusSchema.parse(row.issue.status) },
          cause: row.cause,
          causeInWords: causeInWords(row.cause),
          state: notice.kind === "restoring" ? ("restoring" as const) : ("attention" as const),
          createdAt: row.createdAt,
          nextAction: row.nextAction,
          runId: row.runId,
        };
      }),
      nextCursor: page.nextCursor,
    };
  });
