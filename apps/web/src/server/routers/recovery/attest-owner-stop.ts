import { z } from "zod";
import { attestOwnerStop, attestOwnerStopBody } from "@copyback/core/recovery";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

/** R-ATT-1: the REST body (core's one schema) plus the company and the task. */
export const attestOwnerStopInput = attestOwnerStopBody.extend({ companyId: z.uuid(), issueId: z.uuid() });

export const attestOwnerStopOutput = z.object({
  actionId: z.uuid(),
  runId: z.uuid(),
  leaseIds: z.array(z.string()),
  status: z.enum(["attested", "already_attested"]),
});

/**
 * The operator's stop attestation (R-ATT-2, R-ATT-3): the same core service as
 * POST /api/issues/:id/recovery-actions/resume-workspace-finalization and `copyback recovery
 * attest`. Refusals are conflicts with a stable code (nothing written); the task page offers no
 * control that calls this (R-UI-1): operators use the API call shown in Recovery details.
 */
export const attestRecoveryOwnerStop = companyProcedure("runtime:confirm_owner_stop")
  .input(attestOwnerStopInput)
  .output(attestOwnerStopOutput)
  .mutation(({ ctx, input }) => {
    const { companyId: _companyId, issueId, ...body } = input;
    return attestOwnerStop(ctx.db, { ...body, companyId: ctx.companyId, issueId, actor: actorOf(ctx.principal) });
  });
