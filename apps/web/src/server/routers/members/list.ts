import { z } from "zod";
import { ROLES } from "@copyback/core/auth";
import { companyProcedure } from "~/server/trpc";
import { membershipStatusSchema, roleSchema } from "./member-fields";

export const listMembersOutput = z.array(
  z.object({
    id: z.uuid(),
    user: z.object({ id: z.uuid(), name: z.string(), email: z.string() }),
    role: roleSchema,
    status: membershipStatusSchema,
    createdAt: z.date(),
    /** The signed-in user's own membership. */
    isYou: z.boolean(),
  }),
);

/** The company's members: active first, then by role (owners first) and name. */
export const listMembers = companyProcedure("company:read")
  .output(listMembersOutput)
  .query(async ({ ctx }) => {
    const rows = await ctx.db.companyMembership.findMany({
      where: { companyId: ctx.companyId },
      take: 1000,
      select: {
        id: true,
        role: true,
        status: true,
        createdAt: true,
        user: { select: { id: true, name: true, email: true } },
      },
    });
    const you = ctx.principal.kind === "board_user" ? ctx.principal.userId : null;
    return rows
      .map((row) => ({ ...row, isYou: row.user.id === you }))
      .sort(
        (a, b) =>
          Number(a.status !== "active") - Number(b.status !== "active") ||
          ROLES.indexOf(a.role) - ROLES.indexOf(b.role) ||
          a.user.name.localeCompare(b.user.name),
      );
  });
