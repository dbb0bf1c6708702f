import { z } from "zod";
import { updateIssueStatus as applyIssueStatus } from "@copyback/core/board";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";
import { issueStatusSchema } from "./issue-status-schema";

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

/** Moves a task to another status (core's board/issue-status-update.ts: optimistic concurrency, CONFLICT `stale_status_version`). */
export const updateIssueStatus = companyProcedure("issues:write")
  .input(updateStatusInput)
  .output(updateStatusOutput)
  .mutation(({ ctx, input }) =>
    applyIssueStatus(ctx.db, {
      companyId: ctx.companyId,
      issueId: input.issueId,
      status: input.status,
      expectedStatusVersion: input.expectedStatusVersion,
      actor: actorOf(ctx.principal),
    }),
  );
