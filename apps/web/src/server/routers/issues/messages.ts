import { z } from "zod";
import { companyProcedure } from "~/server/trpc";
import { displayName } from "./author-name";
import { readIssueInCompany } from "./load-issue";

export const issueMessagesInput = z.object({ issueId: z.uuid() });

const MAX_MESSAGES = 500;

export const issueMessage = z.object({
  id: z.uuid(),
  body: z.string(),
  createdAt: z.date(),
  /** Conversation resets (`/new`) start a new generation; the page marks the boundary. */
  generation: z.number().int(),
  author: z.object({ type: z.enum(["user", "agent", "local_board", "system"]), name: z.string() }),
});

export const issueMessagesOutput = z.object({
  messages: z.array(issueMessage),
  /** True when older messages exist beyond the newest MAX_MESSAGES shown. */
  truncated: z.boolean(),
});

/** The task's conversation, oldest first (the newest 500 messages). */
export const listIssueMessages = companyProcedure("issues:read")
  .input(issueMessagesInput)
  .output(issueMessagesOutput)
  .query(async ({ ctx, input }) => {
    await readIssueInCompany(ctx, input.issueId);
    const rows = await ctx.db.issueMessage.findMany({
      where: { issueId: input.issueId, companyId: ctx.companyId },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: MAX_MESSAGES + 1,
      select: {
        id: true,
        body: true,
        createdAt: true,
        conversationGeneration: true,
        authorType: true,
        authorUser: { select: { name: true } },
        authorAgent: { select: { name: true } },
      },
    });
    const truncated = rows.length > MAX_MESSAGES;
    const messages = rows
      .slice(0, MAX_MESSAGES)
      .reverse()
      .map((row) => ({
        id: row.id,
        body: row.body,
        createdAt: row.createdAt,
        generation: row.conversationGeneration,
        author: {
          type: row.authorType,
          name: displayName(
            row.authorType,
            row.authorType === "agent" ? row.authorAgent : row.authorUser,
          ),
        },
      }));
    return { messages, truncated };
  });
