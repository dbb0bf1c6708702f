import { z } from "zod";
import { reconstructWorkspaceBody, reconstructionOffer } from "@copyback/core/recovery";
import { reconstructFromConsole } from "~/server/recovery/reconstruction";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

const intentSchema = z.object({
  id: z.uuid(),
  status: z.enum(["pending", "delivered", "cancelled"]),
  actionId: z.uuid(),
  sourceRunId: z.uuid(),
  leaseId: z.uuid(),
  requestId: z.string(),
  attachmentHashes: z.array(z.object({ attachmentId: z.uuid(), sha256: z.string(), sizeBytes: z.number() })),
  deliveredRunId: z.uuid().nullable(),
  createdAt: z.string(),
  /** R-RC-3, R-RC-5: why a pending delivery waits (core's intentView). */
  deferral: z.object({ code: z.string(), message: z.string(), since: z.string(), lastSeenAt: z.string() }).nullable(),
});

export const reconstructionOfferInput = z.object({ issueId: z.uuid() });
export const reconstructionOfferOutput = z
  .object({
    actionId: z.uuid(),
    sourceRunId: z.uuid(),
    leaseId: z.uuid(),
    statusVersion: z.number().int(),
    destroyedAt: z.string(),
    attachments: z.array(z.object({ id: z.uuid(), name: z.string(), sizeBytes: z.number(), sha256: z.string(), createdAt: z.string() })),
    pendingIntent: intentSchema.nullable(),
  })
  .nullable();

/**
 * R-UI-3, R-RC-1: what "Continue from saved sources" needs, or null: shown only to runtime:manage,
 * and only after the exact sandbox's confirmed destruction (core's reconstructionOffer).
 */
export const getReconstructionOffer = companyProcedure("runtime:manage")
  .input(reconstructionOfferInput)
  .output(reconstructionOfferOutput)
  .query(({ ctx, input }) => reconstructionOffer(ctx.db, { companyId: ctx.companyId, issueId: input.issueId }));

/** R-RC-2: the REST body (core's one schema) plus the company and the task. */
export const reconstructWorkspaceInput = reconstructWorkspaceBody.extend({ companyId: z.uuid(), issueId: z.uuid() });
export const reconstructWorkspaceOutput = z.object({ kind: z.enum(["recorded", "adopted"]), intent: intentSchema });

/**
 * R-RC-2, R-RC-3: the same core service as POST /api/issues/:id/recovery-actions/reconstruct-workspace
 * and `copyback recovery reconstruct`. Refusals carry a stable code and write nothing.
 */
export const reconstructRecoveryWorkspace = companyProcedure("runtime:manage")
  .input(reconstructWorkspaceInput)
  .output(reconstructWorkspaceOutput)
  .mutation(({ ctx, input }) => {
    const { companyId: _companyId, issueId, ...body } = input;
    return reconstructFromConsole(ctx.db, { ...body, companyId: ctx.companyId, issueId, actor: actorOf(ctx.principal) });
  });
