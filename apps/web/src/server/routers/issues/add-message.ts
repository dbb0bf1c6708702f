import { z } from "zod";
import { withTransaction } from "@copyback/db/client";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";
import { recordActivity } from "../activity/record-activity";
import { requireIssueInCompany } from "./load-issue";

export const addMessageInput = z.object({
  issueId: z.uuid(),
  body: z
    .string()
    .trim()
    .min(1, "Write a message first.")
    .max(20_000, "Messages are limited to 20,000 characters."),
});

export const addMessageOutput = z.object({ id: z.uuid(), createdAt: z.date() });

/**
 * A board member posts to the task's conversation. The message, the task's last-activity time
 * and the audit row commit in one transaction.
 */
export const addIssueMessage = companyProcedure("issues:write")
  .input(addMessageInput)
  .output(addMessageOutput)
  .mutation(({ ctx, input }) => {
    const actor = actorOf(ctx.principal);
    return withTransaction(ctx.db, async (tx) => {
      const issue = await requireIssueInCompany(tx, ctx.companyId, input.issueId);
      const now = new Date();
      const message = await tx.issueMessage.create({
        data: {
          companyId: ctx.companyId,
          issueId: issue.id,
          authorType: actor.type,
          authorUserId: actor.type === "user" ? actor.id : null,
          authorAgentId: actor.type === "agent" ? actor.id : null,
          body: input.body,
          conversationGeneration: issue.conversationGeneration,
          createdAt: now,
        },
        select: { id: true, createdAt: true },
      });
      await tx.issue.update({ where: { id: issue.id }, data: { lastActivityAt: now } });
      await recordActivity(tx, {
        companyId: ctx.companyId,
        actor,
        action: "issue.message_posted",
        entityType: "issue",
        entityId: issue.id,
        details: { messageId: message.id },
      });
      return message;
    });
  });
