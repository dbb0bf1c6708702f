// GET /api/environment-leases/:leaseId (R-RR-4): one sandbox allocation as recorded, with its
// pinned plugin, policy, status, cleanup state and metadata; its intents and receipts read with
// their schemas (`records`: a malformed one shows as invalid, never as proof of a stop); its run;
// and the open recovery actions that hold it (by lease id or by their evidence's leaseIds), so an
// operator can confirm that cleanup stopped exactly this allocation before recovering its files.
import { notFound } from "@copyback/core/errors";
import { leaseRecords } from "@copyback/core/leases";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "@copyback/core/records";
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
    const run = lease.runId ? await db.heartbeatRun.findFirst({ where: { id: lease.runId, companyId }, select: { id: true, status: true, runtimeMode: true, errorCode: true } }) : null;
    const holds = await db.$queryRaw<{ id: string; cause: string; status: string; runId: string | null; createdAt: Date }[]>`
      SELECT id, cause, status::text AS status, run_id AS "runId", created_at AS "createdAt" FROM issue_recovery_actions
      WHERE company_id = ${companyId}::uuid AND status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}
        AND (lease_id = ${lease.id}::uuid OR evidence -> 'leaseIds' @> jsonb_build_array(${lease.id}::text))
      ORDER BY created_at, id`;
    return { lease, records: leaseRecords(lease), run, heldBy: holds };
  },
});
