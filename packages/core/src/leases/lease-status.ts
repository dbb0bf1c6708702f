// The lease status machine, pure. Every status change goes through
// transitionLease (transition-lease.ts), a compare-and-set on the current status, so two
// writers racing for one lease (two runs reusing it, a release and a cleanup sweep) cannot both win.
import { LEASE_STATUSES, type LeaseStatus } from "./lease-types";

export { LEASE_STATUSES, type LeaseStatus };

const NEXT: Readonly<Record<LeaseStatus, readonly LeaseStatus[]>> = {
  active: ["released", "pending_cleanup", "destroyed", "failed"],
  // A stop-and-retain in flight: a confirmed receipt releases it; it is never released or
  // destroyed as a fallback for a stop that did not happen (R-SO-1), only by the receipt path.
  pending_cleanup: ["released", "destroyed", "failed"],
  // Stopped with its files kept: reused by the next run of its environment, or destroyed. (The
  // export-only retry's own edge released -> pending_cleanup is not here: stop-intent.ts
  // recordExportRetryIntent, R-EX-5.)
  released: ["active", "destroyed"],
  destroyed: [],
  failed: [],
};

export function canTransition(from: LeaseStatus, to: LeaseStatus): boolean {
  return NEXT[from].includes(to);
}

/** The statuses from `from` that may not move to `to` (empty when the whole request is allowed). */
export function forbiddenTransitions(from: readonly LeaseStatus[], to: LeaseStatus): LeaseStatus[] {
  return from.filter((status) => !canTransition(status, to));
}

export function isTerminal(status: LeaseStatus): boolean {
  return NEXT[status].length === 0;
}
