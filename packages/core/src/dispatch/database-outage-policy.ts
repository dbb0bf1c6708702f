// What a database failure before the agent's start does to a run, pure.
// R-FO-1 pins a sandbox and fails the run when a *provider* fails before a result, because
// the sandbox may hold the agent's unpublished edits. A database that drops the connection while
// the sandbox is acquired, bound, seeded or its agent's key minted says nothing about the task and
// nothing of the task's work exists yet (no agent was ever started): the run goes back to the queue
// instead, as a busy lease does (requeue-run.ts), and a worker picks it up again. Provider,
// isolation and file-system failures (ENOSPC) keep failing the run as before.
//
// Bounded: a run requeued this many times for the database fails with `database_unavailable` the
// next time (through the ordinary setup-failure handlers), so a deterministic error that merely
// looks like the database's never keeps a run cycling through the queue.
import type { PreparationClaim } from "../records/preparation-claim";
import { decidePreparationClaim, type ClaimVerdict } from "../recovery/policies/decide-file-recovery";
import type { ProcessIdentity } from "../process/process-identity";

export const DATABASE_UNAVAILABLE = "database_unavailable";
export const MAX_DATABASE_REQUEUES = 3;

/** The steps of executeRun before the agent's process is started, in order. */
export type SetupStep = "dispatch" | "acquisition" | "preparation" | "runtime_selection" | "sources" | "agent_pack" | "agent_start";

const STEP_WORDS: Record<SetupStep, string> = {
  dispatch: "while the run was being dispatched",
  acquisition: "while the sandbox was being acquired",
  preparation: "while the sandbox workspace was being prepared",
  runtime_selection: "while the agent's runtime was being selected",
  sources: "while the reconstruction's sources were being placed",
  agent_pack: "while the agent pack was being verified",
  agent_start: "before the agent could be started",
};

export function requeueMessage(step: SetupStep): string {
  return `The database was unavailable ${STEP_WORDS[step]}; the run went back to the queue.`;
}

export function requeuesSpentMessage(step: SetupStep, requeues: number): string {
  return `The database was unavailable ${STEP_WORDS[step]}, again after the run went back to the queue ${requeues} times; the run fails.`;
}

export type SetupFailureDecision = { kind: "requeue" } | { kind: "fail"; reason: "not_database" | "agent_launched" };

/** Whether a failure before the agent sends the run back to the queue. */
export function decideSetupFailure(s: { databaseFailure: boolean; agentLaunched: boolean }): SetupFailureDecision {
  // Once the provider was asked to start the agent, its sandbox may hold the agent's work (R-FO-1).
  if (s.agentLaunched) return { kind: "fail", reason: "agent_launched" };
  if (!s.databaseFailure) return { kind: "fail", reason: "not_database" };
  return { kind: "requeue" };
}

/** Whether the run still has a requeue for the database left. */
export function decideRequeueBudget(earlierRequeues: number): { kind: "requeue" } | { kind: "spent"; requeues: number } {
  return earlierRequeues >= MAX_DATABASE_REQUEUES ? { kind: "spent", requeues: earlierRequeues } : { kind: "requeue" };
}

export type AttemptLeaseDecision =
  /** An allocation the lease recorded: released by policy as a run whose agent never started (destroyed, or stopped and retained for reuse). */
  | { kind: "release_by_policy" }
  /**
   * The provider may have made a sandbox the lease never recorded (the bind failed): the lease
   * waits in pending_cleanup with the destroy intent naming it by lease id, as acquire-lease.ts
   * leaves an unconfirmed acquisition; the cleanup sweep acquires again with that id and destroys.
   */
  | { kind: "destroy_intent" }
  /** Already pending cleanup, released or destroyed: it carries its own intent or is settled. */
  | { kind: "leave" };

/** What happens to a lease of this attempt (bound to the run) before the run goes back to the queue. */
export function decideAttemptLease(lease: { status: string; providerLeaseId: string | null }): AttemptLeaseDecision {
  if (lease.status !== "active") return { kind: "leave" };
  return lease.providerLeaseId ? { kind: "release_by_policy" } : { kind: "destroy_intent" };
}

/**
 * R-FO-4: whether this executor may settle a running preparation of its run before the requeue.
 * With the token it was handed (the preparation's own failure), exactly the live claim. Without
 * one (the failure came before the preparation could report its token), only a live claim this
 * very process holds: its dispatcher executes the run, so the claim is this attempt's. Anything
 * else (another holder, a stale or missing claim) refuses, and nothing is cleaned up.
 */
export function decideOwnPreparation(s: { status: string; claim: PreparationClaim | null; token: string | null; self: ProcessIdentity; now: Date }): ClaimVerdict {
  if (s.token !== null) return decidePreparationClaim({ operation: { status: s.status, claim: s.claim }, token: s.token, now: s.now });
  if (s.status !== "running") return { kind: "refused", reason: "preparation_settled" };
  const claim = s.claim;
  if (!claim?.holder) return { kind: "refused", reason: "claim_missing" };
  const h = claim.holder;
  if (h.pid !== s.self.pid || h.startTime !== s.self.startTime || h.bootId !== s.self.bootId || h.host !== s.self.host) return { kind: "refused", reason: "claim_other_owner" };
  if (new Date(claim.expiresAt).getTime() <= s.now.getTime()) return { kind: "refused", reason: "claim_stale" };
  return { kind: "live" };
}
