// Which sandbox a finalizing run may export, pure (R-EX-6, R-ORP-3). The prepared
// descriptor names the lease that was seeded for the run; before any export the lease row read
// under ownership must still be that run's: the same company, bound to the run (a lease rebound to
// another run's turn holds that run's files, not this result's), the allocation that was seeded
// (the provider's immutable id), and a status whose sandbox still exists and is not being
// destroyed. Anything else is refused before the export starts: nothing is staged and nothing
// reaches the host. The held-lease rule (leases/lease-holds.ts) keeps an unsettled run's lease
// from being reused; this check is what refuses to export if it ever was (older data, a bug).
import type { LeaseFacts, LeaseStatus } from "../leases/lease-types";
import type { LeaseHandle } from "../providers/types";

export interface ExportLeaseRow extends LeaseFacts {
  /** A destroy intent is recorded: the sandbox is being (or was) destroyed. */
  destroyIntent: boolean;
}

export interface ExportingRun {
  companyId: string;
  runId: string;
  /** The descriptor's lease and seeded allocation. */
  leaseId: string;
  seededProviderLeaseId: string;
}

export type ExportLeaseDecision =
  | { kind: "bound"; handle: LeaseHandle }
  | { kind: "refused"; code: "finalization_lease_missing" | "finalization_lease_not_bound"; message: string; details: Record<string, unknown> };

/** Statuses whose sandbox exists: in use, stopped with its files, or a stop (or a retry's resume) in flight. */
const EXPORTABLE: ReadonlySet<LeaseStatus> = new Set<LeaseStatus>(["active", "released", "pending_cleanup"]);

export function decideExportLease(lease: ExportLeaseRow | null, run: ExportingRun): ExportLeaseDecision {
  if (!lease || lease.id !== run.leaseId || lease.companyId !== run.companyId || !lease.providerLeaseId) {
    return { kind: "refused", code: "finalization_lease_missing", message: "The run's sandbox lease is missing or has no allocation.", details: { leaseId: run.leaseId } };
  }
  const notBound = (why: "run" | "allocation" | "status", message: string) => ({
    kind: "refused" as const,
    code: "finalization_lease_not_bound" as const,
    message,
    details: { leaseId: lease.id, why, leaseRunId: lease.runId, leaseStatus: lease.status },
  });
  if (lease.runId !== run.runId) return notBound("run", "The run's sandbox lease is bound to another run now; its files are not this result's, so nothing is exported.");
  if (lease.providerLeaseId !== run.seededProviderLeaseId) return notBound("allocation", "The lease names another allocation than the sandbox that was seeded for this run; nothing is exported.");
  if (!EXPORTABLE.has(lease.status) || lease.destroyIntent) return notBound("status", `The run's sandbox is ${lease.destroyIntent ? "being destroyed" : lease.status}; nothing is exported.`);
  return { kind: "bound", handle: { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId } };
}
