import { z } from "zod";
import { resolveHostId } from "@copyback/core/deployment";
import { discardRetainedSandbox } from "@copyback/core/sandboxes";
import { configuredHostId, instanceRootForReports } from "~/env";
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
    const registry = instanceProviders();
    // Issue 23: this console's host (instanceProviders above refused an unknown instance root); a
    // local sandbox of another host is refused sandbox_on_other_host, nothing destroyed.
    const configured = configuredHostId();
    const { hostId } = await resolveHostId({ instanceRoot: instanceRootForReports()!, ...(configured !== undefined ? { configured } : {}) });
    const result = await discardRetainedSandbox({ db: ctx.db, registry, hostId }, { ...input, companyId: ctx.companyId, actor: actorOf(ctx.principal) });
    return { leaseId: result.leaseId, providerLeaseId: result.providerLeaseId, actionIds: result.actionIds, requestId: result.receipt.requestId, destroyedAt: result.receipt.destroyedAt };
  });
