// The one object that owns a run's lease state while it executes (which lease is bound, held and
// already released, whether the agent was launched) and the settlements that end it: a failure
// before a result, the preparation's failure, a database outage's requeue, and the release of the
// lease by policy.
//
// Failures before a result (R-FO-1, R-FO-3): once a sandbox is bound to the run, both setup-failure
// handlers (the preparation's, preparationFailure, and the provider's and agent's, settleFailure)
// go through ONE terminal writer, recovery/file-recovery.ts: the exact sandbox is pinned and the
// file-recovery obligation opened in the transaction that fails the run, before the terminal write
// and before the provider cleanup (release) runs. An owned preparation failure is settled only
// through this controller's exact live recovery claim; another owner or a stale claim settles
// nothing and this controller cleans nothing up (R-FO-4).
//
// Each path that leaves the lease to someone else (the orphan sweep, a preparation claim's holder,
// the stop-retention sweep, an operator) marks it released here, so no later step releases it.
import { databaseFailureIn } from "../database-failure";
import { codeOf, isDomainError, messageOf } from "../errors";
import { releaseLeaseByPolicy } from "../leases/release-lease";
import type { RunEndForLease } from "../leases/release-policy";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import type { FileRecoveryOrigin } from "../records/actions";
import { failRunBeforeResult, type FailBeforeResultInput, type FailBeforeResultOutcome } from "../recovery/file-recovery";
import { isPreparationFailed } from "../workspace/prepare-run-workspace";
import { DATABASE_UNAVAILABLE, decideSetupFailure, requeuesSpentMessage, type SetupStep } from "./database-outage-policy";
import { requeueAfterDatabaseFailure } from "./requeue-after-database-failure";
import type { RunScope } from "./run-scope";

export interface RunLease {
  leaseId: string;
  handle: LeaseHandle;
  plugin: EnvironmentProvider;
}

export type OutageSettlement = { settled: true } | { settled: false; code: string | null };

export class RunLeaseState {
  readonly #run: RunScope;
  /** The dispatcher's signal (the worker stopping), not a Stop's: it ends a wait for the database. */
  readonly #workerSignal: AbortSignal;
  #lease: RunLease | null = null;
  /** The lease bound to the run as soon as it is acquired (the file-recovery pin names it, R-FO-1). */
  #boundLeaseId: string | null = null;
  #leaseReleased = false;
  /** Set just before the provider is asked to start the agent: from then on its sandbox may hold the agent's work (R-FO-1). */
  #agentLaunched = false;

  constructor(run: RunScope, workerSignal: AbortSignal) {
    this.#run = run;
    this.#workerSignal = workerSignal;
  }

  /** The lease bound to the run at its acquisition, before its plugin is resolved. */
  bind(leaseId: string): void {
    this.#boundLeaseId = leaseId;
  }

  /** The lease this run holds with its plugin: released by policy when the run ends. */
  hold(lease: RunLease): void {
    this.#lease = lease;
  }

  /** The held lease's id, or null before it is held. */
  get heldLeaseId(): string | null {
    return this.#lease?.leaseId ?? null;
  }

  /** The lease is someone else's to settle from now on (a sweep, a claim's holder, an operator): never released here. */
  leaveAsItIs(): void {
    this.#leaseReleased = true;
  }

  /** Called just before the provider is asked to start the agent (R-FO-1). */
  agentLaunching(): void {
    this.#agentLaunched = true;
  }

  /**
   * The setup-failure handler of everything but the preparation: fails the run (if it is still
   * running) through the one terminal writer, which first pins a bound sandbox and opens the
   * file-recovery obligation when the run has no result (R-FO-1, R-FO-3); then releases the lease
   * by policy (a pinned lease: its stop-only intent is continued, never a destroy). Never throws.
   */
  async settleFailure(code: string, message: string, origin: FileRecoveryOrigin = "provider_failure", refusal: { agentNeverStarted?: true } = {}): Promise<void> {
    const outcome = await this.#failBeforeResult({ runId: this.#run.claimed.runId, code, message, origin, leaseId: this.#boundLeaseId, ...refusal });
    if (outcome.kind === "unwritten" || outcome.kind === "refused") {
      // R-ORP-3, R-FO-1: the failure is not recorded (its transaction was cut, or it is not this
      // executor's to settle), so the run is still `running` and nothing pins its sandbox. Released
      // now, the lease would be held by no rule and the next run of a reuse_by_environment
      // environment would reseed the agent's only files. It stays bound and active for the orphan
      // sweep, which settles the run (R-ORP-2): pinned with its file-recovery obligation when an
      // agent ran, released by policy when none ever started (R-FO-1's scope).
      this.#run.log.warn({ runId: this.#run.claimed.runId, outcome: outcome.kind }, "run failure not recorded; its lease is left bound for the orphan sweep");
      this.#leaseReleased = true;
      return;
    }
    // R-FO-1 scope: a run refused before its agent started (and judged so by the terminal writer)
    // releases its sandbox as its policy says for a run that left nothing (release-policy.ts).
    await this.release(outcome.kind === "failed" && outcome.reason === "agent_not_started" ? "agent_not_started" : "failed");
  }

  /** A provider step failed: the run fails with the error's code (else the step's) through settleFailure. */
  async providerFailure(fallbackCode: string, what: string, error: unknown, origin: FileRecoveryOrigin = "provider_failure"): Promise<void> {
    const code = codeOf(error, fallbackCode);
    this.#run.log.warn({ runId: this.#run.claimed.runId, code, err: error }, what);
    await this.settleFailure(code, `${what}: ${messageOf(error)}`, origin);
  }

  /**
   * The preparation's setup-failure handler (R-FO-3, R-FO-4): settles the failure through this
   * controller's exact live recovery claim in the transaction that pins the sandbox, opens the
   * obligation and fails the run. Refused (another owner, a stale claim): nothing is cleaned up;
   * the run and its lease are left to whoever holds the claim (the reconciler).
   */
  async preparationFailure(error: unknown, codeOverride: string | null = null): Promise<void> {
    const { claimed, log } = this.#run;
    const code = codeOverride ?? codeOf(error, "workspace_prepare_failed");
    log.warn({ runId: claimed.runId, code, err: error }, "The sandbox workspace could not be prepared");
    if (isDomainError(error) && error.code === "preparation_claim_lost") {
      await this.#run.event("warn", "workspace.preparation_taken_over", "A recovery took this run's preparation over; this worker leaves the run and its sandbox to it.");
      this.#leaseReleased = true;
      return;
    }
    const message = `The sandbox workspace could not be prepared: ${messageOf(error)}`;
    if (!isPreparationFailed(error)) {
      // Refused before anything was recorded (a mismatched plugin, a missing capability), or a
      // step after the preparation: no claim to settle.
      await this.settleFailure(code, message, "preparation_failure");
      return;
    }
    const outcome = await this.#failBeforeResult({
      runId: claimed.runId,
      code,
      message,
      origin: "preparation_failure",
      leaseId: this.#boundLeaseId,
      preparation: { operationId: error.operationId, token: error.claimToken },
    });
    if (outcome.kind === "refused" || outcome.kind === "unwritten") {
      // R-FO-4: not this controller's live claim (or nothing could be written): no cleanup here.
      log.warn({ runId: claimed.runId, outcome: outcome.kind }, "preparation failure not settled here; the lease is left as it is");
      this.#leaseReleased = true;
      return;
    }
    await this.release("failed");
  }

  /**
   * A database failure before the agent was started sends the run back to the queue
   * (requeue-after-database-failure.ts): nothing of the task's work exists yet. `settled`: the
   * run is requeued, someone else's now, or left to the reconciler (a preparation claim that is
   * not this executor's, R-FO-4; a database still down after the wait: the orphan sweep, R-ORP-2),
   * and the caller does nothing more. Otherwise the caller fails the run as before; `code`
   * replaces its failure code when the run has used up its requeues for the database (or settling
   * met another failure).
   */
  async requeueAfterOutage(error: unknown, step: SetupStep, preparation?: { operationId: string; token: string }): Promise<OutageSettlement> {
    const failure = databaseFailureIn(error);
    if (decideSetupFailure({ databaseFailure: failure !== null, agentLaunched: this.#agentLaunched }).kind === "fail") return { settled: false, code: null };
    const { deps, claimed, log } = this.#run;
    const runId = claimed.runId;
    log.warn({ runId, step, err: failure }, "database failure before the agent started; sending the run back to the queue");
    const outcome = await requeueAfterDatabaseFailure(
      { db: deps.db, registry: deps.registry, controller: deps.controller },
      { runId, companyId: claimed.companyId, step, error: failure, ...(preparation ? { preparation } : {}) },
      { signal: this.#workerSignal, ...(deps.databaseOutageMs !== undefined ? { waitMs: deps.databaseOutageMs } : {}) },
    );
    switch (outcome.kind) {
      case "requeued":
      case "settled_elsewhere":
        log.info({ runId, step, outcome: outcome.kind, leases: outcome.leases }, "run sent back to the queue after a database failure");
        this.#leaseReleased = true;
        return { settled: true };
      case "preparation_refused":
        await this.#run.event("warn", "workspace.preparation_claim_refused", `The database failed during the preparation, whose recovery claim is no longer this worker's (${outcome.reason}); the run and its sandbox are left to the claim's holder.`, { reason: outcome.reason, code: DATABASE_UNAVAILABLE });
        this.#leaseReleased = true;
        return { settled: true };
      case "gave_up":
        // Nothing can be written: the orphan sweep finds the run no longer executed here (R-ORP-2).
        log.error({ runId, step, err: outcome.error }, "the database stayed unavailable; the run is left to the reconciler");
        this.#leaseReleased = true;
        return { settled: true };
      case "requeues_spent":
        await this.#run.event("warn", "run.requeues_spent", requeuesSpentMessage(step, outcome.requeues), { reason: DATABASE_UNAVAILABLE, step, requeues: outcome.requeues });
        return { settled: false, code: DATABASE_UNAVAILABLE };
      case "unsettled":
        log.error({ runId, step, err: outcome.error }, "the run could not be sent back to the queue; failing it");
        return { settled: false, code: DATABASE_UNAVAILABLE };
    }
  }

  /** Releases the held lease by its policy for how the run ended, once; a lease left to someone else is not touched. */
  async release(outcome: RunEndForLease): Promise<void> {
    const lease = this.#lease;
    if (!lease || this.#leaseReleased) return;
    this.#leaseReleased = true;
    const { deps, claimed, log } = this.#run;
    try {
      const released = await releaseLeaseByPolicy(deps.db, deps.registry, { leaseId: lease.leaseId, runId: claimed.runId, outcome });
      if (released.kind === "pending_cleanup" || released.kind === "failed") {
        // The stop or destroy was not confirmed (a failed call, a lost reply): the lease keeps its
        // intent for the restart sweep (R-SO-1), never released or destroyed on a guess.
        const code = released.kind === "failed" ? "lease.release_failed" : "lease.cleanup_pending";
        await this.#run.event("warn", code, `The lease was not released after a ${RUN_END_WORDS[outcome]} run (${released.code}): ${released.message}`, {
          leaseId: lease.leaseId,
          outcome,
          result: released.kind,
          code: released.code,
        });
        return;
      }
      await this.#run.event("info", "lease.released", `Lease released by policy after a ${RUN_END_WORDS[outcome]} run.`, { leaseId: lease.leaseId, outcome, result: released.kind });
    } catch (error) {
      log.error({ runId: claimed.runId, leaseId: lease.leaseId, err: error }, "lease release failed");
      await this.#run.event("warn", "lease.release_failed", `The lease could not be released by policy: ${messageOf(error)}`, {
        leaseId: lease.leaseId,
        code: codeOf(error, "lease_release_failed"),
      });
    }
  }

  /** The one terminal writer (recovery/file-recovery.ts); never throws. */
  async #failBeforeResult(input: FailBeforeResultInput): Promise<FailBeforeResultOutcome | { kind: "unwritten" }> {
    try {
      const outcome = await failRunBeforeResult(this.#run.deps.db, input);
      if (outcome.kind === "files_retained") {
        this.#run.log.warn({ runId: input.runId, leaseId: outcome.leaseId, actionId: outcome.actionId }, "run failed before its result; its sandbox is kept for file recovery");
      }
      return outcome;
    } catch (error) {
      this.#run.log.error({ runId: input.runId, code: input.code, err: error }, "could not mark the run failed");
      return { kind: "unwritten" };
    }
  }
}

const RUN_END_WORDS: Record<RunEndForLease, string> = { committed: "committed", failed: "failed", agent_not_started: "refused (its agent never started)" };
