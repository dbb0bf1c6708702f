import { z } from "zod";
import { companyProcedure } from "~/server/trpc";
import { applyMembershipChange } from "@copyback/core/board";
import { actorOf } from "../activity/actor";
import { membershipChangeOutput, roleSchema } from "./member-fields";

export const updateRoleInput = z.object({ membershipId: z.uuid(), role: roleSchema });

/** Changes a member's role (members:manage; owner changes need an owner; never the last owner). */
export const updateMemberRole = companyProcedure("members:manage")
  .input(updateRoleInput)
  .output(membershipChangeOutput)
  .mutation(({ ctx, input }) =>
    applyMembershipChange({
      db: ctx.db,
      principal: ctx.principal,
      actor: actorOf(ctx.principal),
      companyId: ctx.companyId,
      membershipId: input.membershipId,
      change: { role: input.role },
    }),
  );
