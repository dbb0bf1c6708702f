import { z } from "zod";
import { discardRetainedSandbox } from "@copyback/core/sandboxes";
import { instanceProviders } from "~/server/recovery/export-retry";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

export const discardSandboxInput = z.object({
  leaseId: z.uuid(),
  /** The provider's immutable allocation id, as shown: verified against the lease. */
  providerLeaseId: z.string().min(1).max(512),
  /** Every open recovery action that still needs the files, named and acknowledged. */
  acknowledgedActionIds: z.array(z.uuid()).max(100),
  reason: z.string().trim().min(1, "Say why the files are given up.").max(2000),
});

export const discardSandboxOutput = z.object({
  leaseId: z.uuid(),
  providerLeaseId: z.string(),
  actionIds: z.array(z.uuid()),
  requestId: z.uuid(),
  destroyedAt: z.string(),
});

/**
 * Discard of a retained sandbox: the same core service as `copyback sandboxes
 * discard`. Refusals are conflicts with a stable code (allocation_mismatch, acknowledgement_missing,
 * ...) and destroy nothing. The sandbox is destroyed through the lease's pinned plugin from this
 * process (the instance's providers on COPYBACK_HOME, as the export-only retry).
 */
export const discardSandboxProcedure = companyProcedure("runtime:manage")
  .input(discardSandboxInput)
  .output(discardSandboxOutput)
  .mutation(async ({ ctx, input }) => {
    const result = await discardRetainedSandbox({ db: ctx.db, registry: instanceProviders() }, { ...input, companyId: ctx.companyId, actor: actorOf(ctx.principal) });
    return { leaseId: result.leaseId, providerLeaseId: result.providerLeaseId, actionIds: result.actionIds, requestId: result.receipt.requestId, destroyedAt: result.receipt.destroyedAt };
  });
