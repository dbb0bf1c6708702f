// R-OWN-8, R-OWN-10, R-OWN-11, R-OWN-12, R-ORP-4: what a contender may do about a run's existing
// finalization owner receipt, as a pure function of what it can observe. Elapsed time and a
// missing database connection are not inputs: they never prove the old copyback stopped.
import type { ProcessIdentity, ProcessLiveness } from "../process/process-identity";
import type { UnverifiedReason } from "../records/finalization-owner-receipt";

export interface ReceiptView {
  token: string;
  host: string;
  pid: number;
  processStart: string;
  bootId: string;
}

export interface TakeoverSnapshot {
  receipt: { kind: "none" } | { kind: "malformed" } | { kind: "receipt"; receipt: ReceiptView };
  /** This controller (the contender). */
  self: ProcessIdentity;
  /** The liveness probe of the receipt's controller (PID + /proc start time + boot id); null without a receipt. */
  liveness: ProcessLiveness | null;
  /** copybackProven: a durable `workspace_finalize` success barrier exists for the run. */
  barrier: boolean;
  /** The token this very process joined and could not clear (in-process evidence, R-OWN-10), or null. */
  joinedToken: string | null;
}


export type TakeoverDecision =
  /** No receipt: ownership may be taken as usual. */
  | { kind: "free" }
  /** R-OWN-8: the recorded controller lives on this host; it may still be copying. */
  | { kind: "busy"; reason: "owner_alive" }
  /** R-OWN-11: the controller is gone and the barrier proves its copyback finished. */
  | { kind: "takeover"; reason: "controller_gone_with_barrier" }
  /** R-OWN-10: this exact controller boot joined that token; only the clear failed. */
  | { kind: "resume_same_boot" }
  /** R-OWN-11, R-ORP-4: only an operator can verify that the old copyback stopped. */
  | { kind: "require_stop_verification"; reason: UnverifiedReason };

function isSelf(receipt: ReceiptView, self: ProcessIdentity): boolean {
  return receipt.host === self.host && receipt.pid === self.pid && receipt.processStart === self.startTime && receipt.bootId === self.bootId;
}

export function decideTakeover(s: TakeoverSnapshot): TakeoverDecision {
  if (s.receipt.kind === "none") return { kind: "free" };
  if (s.receipt.kind === "malformed") return { kind: "require_stop_verification", reason: "receipt_malformed" };
  const receipt = s.receipt.receipt;
  // R-OWN-10: positive evidence held in this process for exactly this token and identity.
  if (s.joinedToken !== null && s.joinedToken === receipt.token && isSelf(receipt, s.self)) return { kind: "resume_same_boot" };
  const liveness = s.liveness ?? { kind: "unknown" as const, reason: "unreadable" as const };
  switch (liveness.kind) {
    case "alive":
      return { kind: "busy", reason: "owner_alive" };
    case "dead":
      // R-OWN-11 (and R-OWN-12: a reused PID is "dead"): tar/git children of a dead parent may
      // live on, so only the barrier proves the copy finished.
      return s.barrier
        ? { kind: "takeover", reason: "controller_gone_with_barrier" }
        : { kind: "require_stop_verification", reason: "controller_exited_without_barrier" };
    case "unknown":
      return {
        kind: "require_stop_verification",
        reason: liveness.reason === "other_host" ? "controller_on_other_host" : "controller_unobservable",
      };
  }
}
