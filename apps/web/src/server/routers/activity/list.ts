import { z } from "zod";
import type { Prisma } from "@copyback/db/client";
import { companyProcedure } from "~/server/trpc";
import { displayName } from "../issues/author-name";
import { cursorSchema, pageOf } from "../issues/keyset-cursor";

export const listActivityInput = z.object({
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

const jsonValue: z.ZodType<unknown> = z.unknown();

export const activityItem = z.object({
  id: z.uuid(),
  action: z.string(),
  entityType: z.string(),
  entityId: z.uuid().nullable(),
  details: z.record(z.string(), jsonValue),
  createdAt: z.date(),
  actor: z.object({ type: z.enum(["user", "agent", "local_board", "system"]), name: z.string() }),
  /** For issue entities: the human identifier, so the page can link "ACME-12". */
  issue: z.object({ id: z.uuid(), identifier: z.string() }).nullable(),
});

export const listActivityOutput = z.object({
  items: z.array(activityItem),
  nextCursor: z.string().nullable(),
});

/** The company's audit trail, newest first, in keyset pages over (company_id, created_at). */
export const listActivity = companyProcedure("activity:read")
  .input(listActivityInput)
  .output(listActivityOutput)
  .query(async ({ ctx, input }) => {
    const where: Prisma.ActivityLogWhereInput = { companyId: ctx.companyId };
    if (input.cursor) {
      where.createdAt = { lte: input.cursor.at };
      where.OR = [{ createdAt: { lt: input.cursor.at } }, { id: { lt: input.cursor.id } }];
    }
    const rows = await ctx.db.activityLog.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: input.limit + 1,
      select: {
        id: true,
        action: true,
        entityType: true,
        entityId: true,
        details: true,
        createdAt: true,
        actorType: true,
        actorId: true,
      },
    });
    const page = pageOf(rows, input.limit, (row) => row.createdAt);

    // Names and identifiers for one page, in three batched lookups (never one per row).
    const ids = (type: string) => [
      ...new Set(
        page.items.filter((r) => r.actorType === type && r.actorId).map((r) => r.actorId!),
      ),
    ];
    const issueIds = [...new Set(page.items.map(activityIssueId).filter((id) => id !== null))];
    const [users, agents, issues] = await Promise.all([
      ctx.db.user.findMany({
        where: { id: { in: ids("user") } },
        select: { id: true, name: true },
      }),
      ctx.db.agent.findMany({
        where: { id: { in: ids("agent") }, companyId: ctx.companyId },
        select: { id: true, name: true },
      }),
      ctx.db.issue.findMany({
        where: { id: { in: issueIds }, companyId: ctx.companyId },
        select: { id: true, identifier: true },
      }),
    ]);
    const userById = new Map(users.map((u) => [u.id, u]));
    const agentById = new Map(agents.map((a) => [a.id, a]));
    const issueById = new Map(issues.map((i) => [i.id, i]));

    return {
      items: page.items.map((row) => ({
        id: row.id,
        action: row.action,
        entityType: row.entityType,
        entityId: row.entityId,
        details: isRecord(row.details) ? row.details : {},
        createdAt: row.createdAt,
        actor: {
          type: row.actorType,
          name: displayName(
            row.actorType,
            row.actorId
              ? (row.actorType === "agent" ? agentById : userById).get(row.actorId)
              : null,
          ),
        },
        issue: issueById.get(activityIssueId(row) ?? "") ?? null,
      })),
      nextCursor: page.nextCursor,
    };
  });

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The task an audit row is about: its entity when that is an issue, else the `issueId` its writer
 * put in the details (recovery actions, reconstruction), so "... on ACME-12" names and links it.
 * Looked up within the viewer's company only, like every other name on the page.
 */
export function activityIssueId(row: { entityType: string; entityId: string | null; details: unknown }): string | null {
  if (row.entityType === "issue") return row.entityId;
  const issueId = isRecord(row.details) ? row.details.issueId : undefined;
  return typeof issueId === "string" && UUID.test(issueId) ? issueId : null;
}
