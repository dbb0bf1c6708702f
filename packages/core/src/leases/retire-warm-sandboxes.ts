// Warm sandboxes of an environment that stops reusing them (`copyback environment configure
// --lease-policy`). A released `reuse_by_environment` lease that the held-lease rule does
// not hold is a stopped sandbox kept only to be resumed by the next run; once the environment's
// policy is another, no acquisition reuses it (the reuse query takes the new run's policy), so it
// would cost provider storage forever and be shown nowhere (it holds nothing for recovery, so the
// Retained sandboxes page rightly omits it). Each one gets a destroy intent through the one
// released->destroy edge (destroy-lease.ts recordDestroyAfterCommitIntent: compare-and-set on the
// status, its exact stop receipt and the held-lease rule, so a lease reused or held meanwhile is left
// alone), and the lease cleanup sweep destroys it through its pinned plugin (R-EX-6, R-SO-1).
import { Prisma, type TransactionClient } from "@copyback/db/client";
import { newDestroyIntent, recordDestroyAfterCommitIntent } from "./destroy-lease";
import { leaseHeldSql } from "./lease-holds";
import { LEASE_METADATA_KEYS } from "./lease-metadata";

/** Marks every unheld released reusable lease of the environment for destruction; returns their ids. */
export async function retireWarmSandboxes(tx: TransactionClient, environmentId: string): Promise<string[]> {
  const warm = await tx.$queryRaw<{ id: string; companyId: string; runId: string; pluginId: string; providerLeaseId: string | null; receipt: unknown }[]>(Prisma.sql`
    SELECT l.id, l.company_id AS "companyId", l.run_id AS "runId", l.plugin_id AS "pluginId", l.provider_lease_id AS "providerLeaseId",
           l.metadata -> ${LEASE_METADATA_KEYS.stopReceipt} AS receipt
    FROM environment_leases l
    WHERE l.environment_id = ${environmentId}::uuid AND l.status = 'released'::lease_status
      AND l.lease_policy = 'reuse_by_environment'::lease_policy AND l.run_id IS NOT NULL
      AND NOT ${leaseHeldSql("l")}
    ORDER BY l.id
    FOR UPDATE OF l`);
  const retired: string[] = [];
  for (const lease of warm) {
    const intent = newDestroyIntent(lease, { providerLeaseId: lease.providerLeaseId, reason: "policy_changed" });
    if (await recordDestroyAfterCommitIntent(tx, { leaseId: lease.id, receiptJson: lease.receipt, intent })) retired.push(lease.id);
  }
  return retired;
}
