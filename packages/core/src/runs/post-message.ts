// A message on the task's conversation, and `/new` (R-RR-7). The message is always saved: nothing
// a person writes is lost. `/new` starts a new conversation generation (the message is the first
// of it). Neither wakes the agent nor touches any recovery action: while one is open (a repair
// hold, a file-recovery obligation, an unverified-owner or exhausted-export hold, ...) the hold
// stays exactly as it was and the answer says the message waits for it (`deliveryHeld`); the next
// run, admitted the ordinary way once the hold clears, reads the saved messages of the current
// generation. The message, the generation, the task's last activity and the audit row commit in
// one transaction under the task's row lock.
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { invalid, notFound } from "../errors";
import { recordActivity, type Actor } from "../records/record-activity";
import { findOpenHold, holdReason } from "./recovery-hold";

export const MAX_MESSAGE_LENGTH = 20_000;

export interface PostMessageInput {
  companyId: string;
  issueId: string;
  actor: Actor;
  body: string;
}

export interface PostMessageOutcome {
  id: string;
  createdAt: Date;
  conversationGeneration: number;
  /** True when the message was `/new`: it opened a new conversation generation. */
  newConversation: boolean;
  /** Set while a recovery action is open: the message is saved, and waits for it. */
  deliveryHeld: { actionId: string; cause: string; reason: string } | null;
}

/** `/new`, alone or followed by text (pure). */
export function isNewConversationCommand(body: string): boolean {
  return /^\/new(\s|$)/.test(body.trim());
}

export async function postIssueMessage(db: PrismaClient, input: PostMessageInput): Promise<PostMessageOutcome> {
  const body = input.body.trim();
  if (body.length === 0) throw invalid("message_empty", "Write a message first.");
  if (body.length > MAX_MESSAGE_LENGTH) throw invalid("message_too_long", `Messages are limited to ${MAX_MESSAGE_LENGTH.toLocaleString("en-US")} characters.`);
  return withTransaction(db, async (tx) => {
    await tx.$queryRaw`SELECT id FROM issues WHERE id = ${input.issueId}::uuid AND company_id = ${input.companyId}::uuid FOR UPDATE`;
    const issue = await tx.issue.findFirst({ where: { id: input.issueId, companyId: input.companyId }, select: { id: true, conversationGeneration: true } });
    if (!issue) throw notFound("Issue");
    const newConversation = isNewConversationCommand(body);
    const generation = newConversation ? issue.conversationGeneration + 1 : issue.conversationGeneration;
    const now = new Date();
    const message = await tx.issueMessage.create({
      data: {
        companyId: input.companyId,
        issueId: issue.id,
        authorType: input.actor.type,
        authorUserId: input.actor.type === "user" ? input.actor.id : null,
        authorAgentId: input.actor.type === "agent" ? input.actor.id : null,
        body,
        conversationGeneration: generation,
        createdAt: now,
      },
      select: { id: true, createdAt: true },
    });
    await tx.issue.update({
      where: { id: issue.id },
      data: { lastActivityAt: now, ...(newConversation ? { conversationGeneration: generation } : {}) },
    });
    const hold = await findOpenHold(tx, input.companyId, issue.id);
    await recordActivity(tx, {
      companyId: input.companyId,
      actor: input.actor,
      action: newConversation ? "issue.conversation_started" : "issue.message_posted",
      entityType: "issue",
      entityId: issue.id,
      details: { messageId: message.id, conversationGeneration: generation, ...(hold ? { heldBy: hold.id } : {}) },
    });
    return {
      id: message.id,
      createdAt: message.createdAt,
      conversationGeneration: generation,
      newConversation,
      deliveryHeld: hold ? { actionId: hold.id, cause: hold.cause, reason: holdReason(hold.cause) } : null,
    };
  });
}
