// The open recovery actions that still need a lease's files (R-FO-5): those naming it as their
// lease, or among the leases their evidence lists. Locked FOR UPDATE, oldest first, in the caller's
// transaction: a Discard's admission and its resumption both check the operator acknowledged
// exactly these, and no action may resolve or open unseen meanwhile. The same predicate as
// lease-holds.ts's open-action terms.
import type { TransactionClient } from "@copyback/db/client";
import { OPEN_RECOVERY_ACTION_STATUSES_SQL } from "../records/actions";

export async function lockOpenActionsNamingLease(tx: TransactionClient, lease: { companyId: string; leaseId: string }): Promise<string[]> {
  const rows = await tx.$queryRaw<{ id: string }[]>`
    SELECT ra.id FROM issue_recovery_actions ra
    WHERE ra.company_id = ${lease.companyId}::uuid AND ra.status IN ${OPEN_RECOVERY_ACTION_STATUSES_SQL}
      AND (ra.lease_id = ${lease.leaseId}::uuid OR ra.evidence -> 'leaseIds' @> jsonb_build_array(${lease.leaseId}::text))
    ORDER BY ra.created_at, ra.id FOR UPDATE`;
  return rows.map((row) => row.id);
}
