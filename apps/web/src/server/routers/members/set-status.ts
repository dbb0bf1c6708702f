import { z } from "zod";
import { companyProcedure } from "~/server/trpc";
import { applyMembershipChange } from "@copyback/core/board";
import { actorOf } from "../activity/actor";
import { membershipChangeOutput, membershipStatusSchema } from "./member-fields";

export const setStatusInput = z.object({ membershipId: z.uuid(), status: membershipStatusSchema });

/** Suspends or reactivates a member; a suspended membership keeps its row but grants nothing. */
export const setMemberStatus = companyProcedure("members:manage")
  .input(setStatusInput)
  .output(membershipChangeOutput)
  .mutation(({ ctx, input }) =>
    applyMembershipChange({
      db: ctx.db,
      principal: ctx.principal,
      actor: actorOf(ctx.principal),
      companyId: ctx.companyId,
      membershipId: input.membershipId,
      change: { status: input.status },
    }),
  );
