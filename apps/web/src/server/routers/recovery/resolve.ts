import { z } from "zod";
import { resolveRecoveryAction, resolveRecoveryActionBody } from "@copyback/core/recovery";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

/** R-RR-5: the REST body (core's one schema) plus the company and the task. */
export const resolveRecoveryInput = resolveRecoveryActionBody.safeExtend({ companyId: z.uuid(), issueId: z.uuid() });

export const resolveRecoveryOutput = z.object({
  actionId: z.uuid(),
  runId: z.string(),
  leaseIds: z.array(z.string()),
  outcome: z.enum(["restored", "false_positive", "cancelled", "reverify"]),
  status: z.enum(["resolved", "already_resolved"]),
});

/**
 * The file-recovery form's mutation (R-UI-4, R-RR-5, R-FO-5): the same core service as
 * POST /api/issues/:id/recovery-actions/resolve and `copyback recovery resolve`, for board
 * operators (`runtime:manage`). Refusals are conflicts with a stable code; nothing is written.
 */
export const resolveRecovery = companyProcedure("runtime:manage")
  .input(resolveRecoveryInput)
  .output(resolveRecoveryOutput)
  .mutation(({ ctx, input }) => {
    const { companyId: _companyId, issueId, ...body } = input;
    return resolveRecoveryAction(ctx.db, { ...body, companyId: ctx.companyId, issueId, actor: actorOf(ctx.principal) });
  });
