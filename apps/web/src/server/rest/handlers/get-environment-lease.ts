// GET /api/environment-leases/:leaseId (R-RR-4): one sandbox allocation as recorded, with its
// pinned plugin, policy, status, cleanup state and intents/receipts (metadata).
import { notFound } from "@copyback/core/errors";
import { restRoute } from "../rest-route";
import { leaseFromPath } from "../resources";

export const getEnvironmentLeaseRoute = restRoute({
  method: "GET",
  path: "/api/environment-leases/:leaseId",
  permission: "runs:read",
  resource: leaseFromPath,
  handler: async ({ db, companyId, resource }) => {
    const lease = await db.environmentLease.findFirst({
      where: { id: resource.id, companyId },
      select: {
        id: true,
        companyId: true,
        environmentId: true,
        executionWorkspaceId: true,
        runId: true,
        issueId: true,
        provider: true,
        pluginId: true,
        providerLeaseId: true,
        leasePolicy: true,
        status: true,
        metadata: true,
        acquiredAt: true,
        releasedAt: true,
        cleanupAttempts: true,
        nextCleanupAt: true,
        createdAt: true,
        updatedAt: true,
      },
    });
    if (!lease) throw notFound("The environment lease");
    return { lease };
  },
});
