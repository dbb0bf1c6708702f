// Rehearsal faults of the local provider (environment config `faults.failExports`): armed per
// lease at its first acquisition, in this process; each export of the lease (full, delta or
// salvage: one per copyback try) uses one up by failing as a provider outage would.
import { DomainError } from "../../errors";
import type { LeaseHandle } from "../types";

export interface ExportFaults {
  /** Arms `count` failures for a lease, unless they were armed already (a re-acquisition keeps what is left). */
  arm(leaseId: string, count: number): void;
  /** Throws provider_fault_injected while the lease has a failure left. */
  failIfArmed(lease: LeaseHandle): void;
}

export function exportFaults(): ExportFaults {
  const left = new Map<string, number>();
  return {
    arm(leaseId, count) {
      if (!left.has(leaseId)) left.set(leaseId, count);
    },
    failIfArmed(lease) {
      const remaining = left.get(lease.leaseId) ?? 0;
      if (remaining <= 0) return;
      left.set(lease.leaseId, remaining - 1);
      throw new DomainError("unavailable", "provider_fault_injected", `Rehearsal: injected export failure of lease ${lease.leaseId} (${remaining - 1} left).`);
    },
  };
}
