// What a native run that fails before its result leaves behind, pure (R-FO-1..4, R-FO-6).
//
// A sandbox that was bound to the run may hold the only copy of what its agent wrote: a prepared
// workspace reference proves nothing about those files (R-FO-2), so every terminal failure before
// a result pins the exact bound sandbox and opens one board-owned file-recovery obligation in the
// transaction that fails the run (R-FO-1), before any provider cleanup (R-FO-3). Not here:
//   - a run with an accepted result: accepted-result export recovery owns it (R-FO-6);
//   - a run whose export already finalized (the success barrier): nothing is left to recover (R-FO-6);
//   - a run that never had an allocation: there are no files (the failure is written alone);
//   - a run its executor refused before it started the agent (and no agent process is recorded):
//     nothing but the seed and the controller's inputs is in the sandbox (R-FO-1's scope).
// An owned preparation failure is settled only through its exact live recovery claim: another
// owner, a stale (expired) claim or a missing one writes nothing and prevents cleanup (R-FO-4).
import type { PreparationClaim } from "../../records/preparation-claim";

export type ClaimVerdict =
  | { kind: "live" }
  /** The operation names another claim (a recovery took it over), or someone already settled it. */
  | { kind: "refused"; reason: "claim_other_owner" | "claim_stale" | "claim_missing" | "preparation_settled" };

export interface PreparationClaimSnapshot {
  /** The workspace_prepare operation under its row lock; null when it does not exist. */
  operation: { status: string; claim: PreparationClaim | null } | null;
  /** The token the settler holds. */
  token: string;
  now: Date;
}

/** R-FO-4: only the exact live claim settles: the same token, not expired, on a running operation. */
export function decidePreparationClaim(s: PreparationClaimSnapshot): ClaimVerdict {
  if (!s.operation) return { kind: "refused", reason: "claim_missing" };
  if (s.operation.status !== "running") return { kind: "refused", reason: "preparation_settled" };
  const claim = s.operation.claim;
  if (!claim) return { kind: "refused", reason: "claim_missing" };
  if (claim.token !== s.token) return { kind: "refused", reason: "claim_other_owner" };
  if (new Date(claim.expiresAt).getTime() <= s.now.getTime()) return { kind: "refused", reason: "claim_stale" };
  return { kind: "live" };
}

export interface FailBeforeResultSnapshot {
  /** heartbeat_runs.status under its row lock. */
  runStatus: string;
  /** runtime_mode = 'native': legacy runs keep their own copy-back repair path (R-RR-2). */
  native: boolean;
  acceptedResult: boolean;
  /** The success barrier (copybackProven): the export already finalized. */
  exportFinalized: boolean;
  /** The run's bound lease under its row lock, or null when none was ever bound. */
  lease: { id: string; status: string; providerLeaseId: string | null } | null;
  /** The verdict on an owned preparation failure's claim; null when the failure owns no preparation. */
  claim: ClaimVerdict | null;
  /**
   * The executor refused the run before it ever started the agent in the bound sandbox (a
   * reconstruction's sources refused at placement, after the runtime selection proved the sandbox
   * is the seeded one) AND no agent process is recorded on the run. Not a provider failure.
   */
  agentNeverStarted?: boolean;
}

export type FailBeforeResultDecision =
  /** The run is no longer running: someone else settled it; nothing is written, no cleanup here. */
  | { kind: "already_settled"; status: string }
  /** R-FO-4: the claim is not this settler's live one: nothing is written and no cleanup runs. */
  | { kind: "refused"; reason: Extract<ClaimVerdict, { kind: "refused" }>["reason"] }
  /** The failure alone: an accepted result's own path, a finalized export, or no sandbox at all. */
  | { kind: "fail_only"; reason: "accepted_result" | "export_finalized" | "no_allocation" | "legacy_run" | "agent_not_started" }
  /** R-FO-1: pin the exact lease, open the obligation, fail the run, in one transaction. */
  | { kind: "retain_files"; leaseId: string };

export function decideFailBeforeResult(s: FailBeforeResultSnapshot): FailBeforeResultDecision {
  if (s.runStatus !== "running" && s.runStatus !== "queued") return { kind: "already_settled", status: s.runStatus };
  if (s.claim && s.claim.kind === "refused") return { kind: "refused", reason: s.claim.reason };
  if (!s.native) return { kind: "fail_only", reason: "legacy_run" };
  // R-FO-6: an accepted result is finalized (or held) by its own path, never turned into a file obligation.
  if (s.acceptedResult) return { kind: "fail_only", reason: "accepted_result" };
  // R-FO-6: the barrier proves the files reached the host: nothing to recover.
  if (s.exportFinalized) return { kind: "fail_only", reason: "export_finalized" };
  // R-FO-2: a lease with an allocation may hold the agent's files whatever was prepared or recorded.
  // Without a recorded allocation no agent was ever started in it, whatever its status: still being
  // acquired (active), or an acquisition whose reply was lost (pending_cleanup with the
  // acquire_unconfirmed destroy intent, which the cleanup sweep must be free to settle).
  if (!s.lease || !s.lease.providerLeaseId) return { kind: "fail_only", reason: "no_allocation" };
  if (s.lease.status === "destroyed") return { kind: "fail_only", reason: "no_allocation" };
  // R-FO-1 is about a provider failing while the workspace may hold unpublished edits; only an
  // agent makes edits. A run refused by its executor before any agent process was started holds
  // the seed (the host's own files, per the durable descriptor) and the controller's inputs
  // outside the workspace: there is nothing to recover, so no obligation, and the lease follows
  // its policy for a run whose agent never started (release-policy.ts).
  if (s.agentNeverStarted === true) return { kind: "fail_only", reason: "agent_not_started" };
  return { kind: "retain_files", leaseId: s.lease.id };
}

export interface OrphanPreparationSnapshot {
  claim: PreparationClaim | null;
  /** The run's controller that the orphan sweep judged gone. */
  deadController: { pid: number; startTime: string; bootId: string; host: string };
  now: Date;
}

/**
 * R-FO-4: the orphan sweep takes over a running preparation only when its claim is that dead
 * controller's, has expired, or is missing (written before claims existed or malformed: nobody can
 * settle it otherwise). A live claim of any other holder stops the whole recovery.
 */
export function decideOrphanPreparation(s: OrphanPreparationSnapshot): { kind: "take_over" } | { kind: "refused"; reason: "claim_other_owner" } {
  const claim = s.claim;
  if (!claim || !claim.holder) return { kind: "take_over" };
  const h = claim.holder;
  const d = s.deadController;
  if (h.pid === d.pid && h.startTime === d.startTime && h.bootId === d.bootId && h.host === d.host) return { kind: "take_over" };
  if (new Date(claim.expiresAt).getTime() <= s.now.getTime()) return { kind: "take_over" };
  return { kind: "refused", reason: "claim_other_owner" };
}
