import { z } from "zod";
import { postIssueMessage } from "@copyback/core/runs";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

export const addMessageInput = z.object({
  issueId: z.uuid(),
  body: z
    .string()
    .trim()
    .min(1, "Write a message first.")
    .max(20_000, "Messages are limited to 20,000 characters."),
});

export const addMessageOutput = z.object({
  id: z.uuid(),
  createdAt: z.date(),
  conversationGeneration: z.number().int(),
  /** The message was `/new`: it started a new conversation generation. */
  newConversation: z.boolean(),
  /** R-RR-7: an open recovery action; the message is saved and waits for it (no agent sees it yet). */
  deliveryHeld: z.object({ actionId: z.uuid(), cause: z.string(), reason: z.string() }).nullable(),
});

/**
 * A board member posts to the task's conversation, or starts a new conversation with `/new`
 * (core's postIssueMessage: the message, the generation, the task's last activity and the audit
 * row commit in one transaction). Neither touches an open recovery action (R-RR-7).
 */
export const addIssueMessage = companyProcedure("issues:write")
  .input(addMessageInput)
  .output(addMessageOutput)
  .mutation(({ ctx, input }) =>
    postIssueMessage(ctx.db, { companyId: ctx.companyId, issueId: input.issueId, actor: actorOf(ctx.principal), body: input.body }),
  );
