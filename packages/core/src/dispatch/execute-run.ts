// One claimed run, from its lease to a settled state (DESIGN.md section 3, "Dispatch" and
// "Finalization"): load the run's agent, environment and workspace; acquire the environment lease
// (a busy lease puts the run back in the queue); prepare the sandbox workspace; run the agent's
// command there with its output in the run log; publish the process adapter's result file; then
// finalize an accepted result through the copyback engine, or fail the run with the reason the
// agent gave none; release the lease by its policy. Every step writes a run event.
//
// executeRun never throws: the dispatcher runs it in the background, so every failure is settled
// here (failRun with a stable code, the lease released by policy) or, when even that fails, logged
// and left to the reconciler (the run keeps this controller's identity, recorded at claim time).
//
// Failures before a result (R-FO-1, R-FO-3): once a sandbox is bound to the run, both
// setup-failure handlers (the preparation's, #preparationFailure, and the provider's and agent's,
// settleFailure: exec errors, an agent that exits without a result, a descriptor read failing in
// runtime selection) go through ONE terminal writer, recovery/file-recovery.ts: the exact sandbox
// is pinned and the file-recovery obligation opened in the transaction that fails the run, before
// the terminal write and before the provider cleanup (#release) runs. A prepared workspace is no
// export receipt (R-FO-2); an accepted result keeps its own path (R-FO-6). An owned preparation
// failure is settled only through this controller's exact live recovery claim; another owner or a
// stale claim settles nothing and this controller cleans nothing up (R-FO-4).
//
// A database failure before the agent was started (issue 20): the run is neither failed nor pinned
// but goes back to the queue (database-outage-policy.ts, requeue-after-database-failure.ts), at
// every step up to the provider's exec call: the run's load, the lease's acquisition and bind, the
// preparation, the runtime selection, a reconstruction's sources, the agent's run key. What the
// attempt created is settled by policy first; a database that stays down past the wait leaves the
// run to the reconciler's orphan sweep (R-ORP-2), never running forever. Recording the agent's
// process comes after its start and stays best-effort (R-OWN-12: the agent may already write).
import type { Prisma, PrismaClient } from "@copyback/db";
import { withTransaction } from "@copyback/db/client";
import type { DirectoryMergeLocks } from "../copyback/locks/index";
import { databaseFailureIn } from "../database-failure";
import { DomainError, isDomainError } from "../errors";
import { leaseOutcomeAfterFinalize } from "../finalization/finalize-outcome-policy";
import { finalizeRun, isOwnershipLoss, type FinalizeOutcome, type FinalizeRunDeps } from "../finalization/finalize-run";
import { loadPreparedWorkspace } from "../finalization/workspace-descriptor";
import { acquireLease } from "../leases/acquire-lease";
import { releaseLeaseByPolicy } from "../leases/release-lease";
import type { RunEndForLease } from "../leases/release-policy";
import type { ProcessIdentity } from "../process/process-identity";
import { hasCapability, requireCapability, type ProviderRegistry } from "../providers/registry";
import type { EnvironmentProvider, ExecResult, LeaseHandle } from "../providers/types";
import { publishRunResult } from "../runs/publish-result";
import { mintRunAgentKey, revokeRunAgentKeys, RUN_AGENT_KEY_VARIABLE } from "../runs/run-agent-key";
import { recordRunEvent } from "../records/run-log";
import type { FileRecoveryOrigin } from "../records/actions";
import { failRunBeforeResult, type FailBeforeResultInput, type FailBeforeResultOutcome } from "../recovery/file-recovery";
import { isPreparationFailed, prepareRunWorkspace, type PreparedRunWorkspace } from "../workspace/prepare-run-workspace";
import { AgentOutputRecorder, DEFAULT_OUTPUT_LIMITS, type OutputLimits } from "./agent-output";
import { decideAfterAgent, decideAfterExecFailure, type AgentExit } from "./agent-outcome";
import { recordAgentProcess } from "../records/agent-process";
import type { ClaimedRunRef } from "./claimed-run";
import { silentDispatchLog, type DispatchLog } from "./dispatch-log";
import { waitForLease } from "./lease-wait";
import { decideRunContext, loadRunContext, type ReadyRunContext } from "./run-context";
import { requeueRun } from "./requeue-run";
import { DATABASE_UNAVAILABLE, decideSetupFailure, requeuesSpentMessage, type SetupStep } from "./database-outage-policy";
import { requeueAfterDatabaseFailure } from "./requeue-after-database-failure";
import { finishLegacyTurn } from "./legacy-run";
import { recordLegacyLeaseSnapshot } from "../recovery/legacy/lease-snapshot";
import type { ReconstructionContext } from "../recovery/reconstruction/authority";
import { reconstructionGate, withdrawReconstruction } from "../recovery/reconstruction/dispatch-gate";
import { placeReconstructionSources, type SourcesPlacement } from "../recovery/reconstruction/place-sources";
import { contextDocument, decideContextDelivery, type ContextDelivery } from "../recovery/reconstruction/context-delivery";
import { withSourcesByUrlOnly } from "../recovery/reconstruction/sandbox-sources";
import { cancelStoppedRun } from "../runs/cancel-stopped-run";
import type { StopRequestRecord } from "../records/run-stop-records";
import { watchForStop, type StopWatch } from "./stop-watch";

export interface ExecuteRunDeps {
  db: PrismaClient;
  registry: ProviderRegistry;
  instanceRoot: string;
  locks: DirectoryMergeLocks;
  /** The application database URL: finalization takes its advisory lock on a dedicated connection (R-OWN-6). */
  databaseUrl: string;
  /** This worker process, as recorded on the runs it claims (R-OWN-12). */
  controller: ProcessIdentity;
  /** The console's base URL, given to the agent as COPYBACK_API_URL (the finish API lives there). */
  apiUrl?: string;
  log?: DispatchLog;
  outputLimits?: OutputLimits;
  /** How long a busy lease is retried in process before the run goes back to the queue. */
  leaseWaitMs?: number;
  /** Backoff of finalization's in-process copyback retries (tests pass a zero backoff). */
  retry?: FinalizeRunDeps["retry"];
  /** How long one copyback try may spend exporting before it is aborted and retried (default 10 minutes). */
  exportTimeoutMs?: FinalizeRunDeps["exportTimeoutMs"];
  /** Finalizations in flight in this process; the worker awaits them before closing the database. */
  finalizations?: Set<Promise<unknown>>;
  /** How long a preparation's recovery claim lives without renewal (R-FO-4; default 15 minutes). */
  preparationClaimMs?: number;
  /** How often the executor reads its run row for a Stop request (R-RC-7; default 1 s). */
  stopPollMs?: number;
  /** How long a Stop's retention tries the task's row lock before leaving it to the sweep (default 2 s). */
  taskLockWaitMs?: number;
  /** How long a database failure before the agent's start is waited out before the run is left to the reconciler (default 5 minutes). */
  databaseOutageMs?: number;
}

type Level = "debug" | "info" | "warn" | "error";

interface Lease {
  leaseId: string;
  handle: LeaseHandle;
  plugin: EnvironmentProvider;
}

export async function executeRun(deps: ExecuteRunDeps, claimed: ClaimedRunRef, signal: AbortSignal): Promise<void> {
  const log = deps.log ?? silentDispatchLog;
  const run = new RunSteps(deps, claimed, log, signal);
  try {
    await run.execute(signal);
  } catch (error) {
    // Last line of defence: a step threw past its own handling (a database outage, a bug).
    log.error({ runId: claimed.runId, err: error }, "run execution failed unexpectedly");
    // Issue 20: a database failure before the agent was started (the run's load, a Stop's cancel)
    // sends the run back to the queue; nothing of the task's work exists yet.
    const outage = await run.requeueAfterOutage(error, "dispatch");
    if (outage.settled) return;
    // R-FO-6: an accepted result keeps its own export path. Failing the run here would drop it and
    // release its sandbox with the only copy of the work; instead this executor gives the run up
    // with its lease bound, and the reconciler's finalization sweep, which sees that this process
    // no longer executes it (controller-liveness.ts), finalizes the saved result. When even that
    // cannot be read, nothing is written either: the sweeps judge the run from what is recorded.
    const accepted = await run.hasAcceptedResult().catch(() => null);
    if (accepted !== false) {
      log.warn({ runId: claimed.runId, acceptedResult: accepted }, "run left to the reconciler: its accepted result (or whether it has one) outlives this executor's failure");
      return;
    }
    await run.settleFailure(outage.code ?? "dispatch_internal_error", `The worker could not complete the run: ${messageOf(error)}`);
  }
}

class RunSteps {
  readonly #deps: ExecuteRunDeps;
  readonly #claimed: ClaimedRunRef;
  readonly #log: DispatchLog;
  #lease: Lease | null = null;
  /** The lease bound to the run as soon as it is acquired (the file-recovery pin names it, R-FO-1). */
  #boundLeaseId: string | null = null;
  #leaseReleased = false;
  /** Set just before the provider is asked to start the agent: from then on its sandbox may hold the agent's work (R-FO-1). */
  #agentLaunched = false;
  /** The dispatcher's signal (the worker stopping), not a Stop's: it ends a wait for the database. */
  readonly #workerSignal: AbortSignal;
  /**
   * The reconstruction variables the agent gets (R-RC-5: admitted at the handoff, its sources and
   * context placed; context-delivery.ts), or null for an ordinary run.
   */
  #reconstructionEnv: Record<string, string> | null = null;

  constructor(deps: ExecuteRunDeps, claimed: ClaimedRunRef, log: DispatchLog, workerSignal: AbortSignal) {
    this.#deps = deps;
    this.#claimed = claimed;
    this.#log = log;
    this.#workerSignal = workerSignal;
  }

  async execute(signal: AbortSignal): Promise<void> {
    const { db } = this.#deps;
    const started = Date.now();
    const decision = decideRunContext(await loadRunContext(db, this.#claimed.runId));
    if (decision.kind === "not_running") {
      this.#log.info({ runId: this.#claimed.runId, status: decision.status }, "claimed run is no longer running; nothing to do");
      return;
    }
    if (decision.kind === "reject") {
      await this.#event("error", "run.rejected", decision.message, { code: decision.code });
      await this.settleFailure(decision.code, decision.message);
      return;
    }
    const context = decision.context;
    // R-RC-7: a Stop recorded on the run aborts the lease wait and the agent's exec (stop-watch.ts).
    const watch = watchForStop(db, context.runId, signal, this.#deps.stopPollMs);
    try {
      await this.#executeReady(context, watch, started);
    } finally {
      watch.close();
    }
  }

  async #executeReady(context: ReadyRunContext, watch: StopWatch, started: number): Promise<void> {
    const { db } = this.#deps;
    const signal = watch.signal;
    await this.#event("info", "run.dispatched", "The worker loaded the run's agent, environment and workspace.", {
      controller: { ...this.#deps.controller },
      environmentId: context.environmentId,
      executionWorkspaceId: context.executionWorkspaceId,
    });

    // R-RC-5: immediately before the provider gets the run (its sandbox is acquired next), a
    // reconstruction's run rechecks its exact intent, sources and execution gates once more.
    const gate = context.carriesReconstruction
      ? await withTransaction(db, (tx) => reconstructionGate(tx, { runId: context.runId, stage: "handoff", instanceRoot: this.#deps.instanceRoot }))
      : ({ kind: "ordinary" } as const);
    if (gate.kind === "reject") {
      await this.#refuseReconstruction(context.runId, gate.intentId, gate.code, `The reconstruction's run stopped before its provider handoff (${gate.code}): ${gate.message}`);
      return;
    }
    const admitted = gate.kind === "admit" ? gate.context : null;
    // R-RC-5: a context too large for an environment variable, for an environment whose provider
    // cannot place it as a file, is refused here, before any sandbox (never an E2BIG at agent start).
    const oversized = admitted ? this.#contextTooLargeFor(context, admitted) : null;
    if (admitted && oversized) {
      await this.#refuseReconstruction(context.runId, admitted.intentId, oversized.code, `The reconstruction's run stopped before its provider handoff (${oversized.code}): ${oversized.message}`, { contextBytes: oversized.bytes });
      return;
    }

    // 1. The environment lease. A busy lease is waited for briefly, then the run is requeued.
    const acquired = await waitForLease(
      () =>
        acquireLease(db, this.#deps.registry, {
          companyId: context.companyId,
          runId: context.runId,
          issueId: context.issueId,
          environmentId: context.environmentId,
          executionWorkspaceId: context.executionWorkspaceId,
        }),
      { maxWaitMs: this.#deps.leaseWaitMs ?? 15_000, signal, onBusy: () => this.#event("info", "lease.busy", "Another run holds this environment's lease for the workspace; waiting.") },
    ).catch((error: unknown) => ({ kind: "error" as const, error }));
    if (acquired.kind === "busy" && watch.requested()) {
      if (!(await this.#stopped(watch.requested() as StopRequestRecord, null))) await this.#finalize(context, started);
      return;
    }
    if (acquired.kind === "busy") {
      const requeued = await requeueRun(db, {
        runId: context.runId,
        companyId: context.companyId,
        controller: this.#deps.controller,
        code: "lease_busy",
        message: "The environment's lease for this workspace is held by another run; the run went back to the queue.",
      });
      this.#log.info({ runId: context.runId, requeued }, "lease busy; run requeued");
      return;
    }
    if (acquired.kind === "error") {
      const outage = await this.requeueAfterOutage(acquired.error, "acquisition");
      if (outage.settled) return;
      await this.#providerFailure(outage.code ?? "provider_acquire_failed", "The environment could not be acquired", acquired.error);
      return;
    }
    const { lease, handle, reused, isolated } = acquired.value;
    this.#boundLeaseId = lease.id;
    await this.#event("info", "lease.acquired", isolated ? "Sandbox acquired (isolated)." : "Sandbox acquired (NOT isolated: the agent is not confined to its sandbox).", {
      leaseId: lease.id,
      pluginId: handle.pluginId,
      providerLeaseId: handle.providerLeaseId,
      policy: lease.leasePolicy,
      reused,
      isolated,
    });
    let plugin: EnvironmentProvider;
    try {
      plugin = this.#deps.registry.forLease({ pluginId: lease.pluginId, provider: lease.provider }); // R-EX-6
    } catch (error) {
      await this.#providerFailure("provider_plugin_unavailable", "The lease's provider plugin is unavailable", error, "provider_failure");
      return;
    }
    this.#lease = { leaseId: lease.id, handle, plugin };

    // 2. The sandbox workspace: baseline manifest and seed from one locked view of the host.
    let prepared: PreparedRunWorkspace;
    try {
      // R-FO-4: the preparation carries this controller's recovery claim.
      prepared = await prepareRunWorkspace(this.#deps, { runId: context.runId, lease: handle, plugin, recoveryClaim: { holder: this.#deps.controller, ttlMs: this.#deps.preparationClaimMs } });
      // R-LG-1: a legacy run's exact lease snapshot, recorded before its adapter is dispatched.
      if (context.runtimeMode === "legacy") await recordLegacyLeaseSnapshot(db, { runId: context.runId, leaseId: lease.id, realizedRoot: prepared.descriptor.hostPath });
    } catch (error) {
      const outage = await this.requeueAfterOutage(error, "preparation", isPreparationFailed(error) ? { operationId: error.operationId, token: error.claimToken } : undefined);
      if (outage.settled) return;
      await this.#preparationFailure(error, outage.code);
      return;
    }

    // Runtime selection: the agent runs in exactly the sandbox that was prepared, read back from
    // its durable descriptor; a failing read is a setup failure like any other (R-FO-3).
    try {
      await this.#selectRuntime(context, handle, plugin, prepared);
    } catch (error) {
      const outage = await this.requeueAfterOutage(error, "runtime_selection");
      if (outage.settled) return;
      await this.#providerFailure(outage.code ?? "runtime_selection_failed", "The agent's runtime could not be selected", error, "runtime_selection_failure");
      return;
    }

    // R-RC-5: a reconstruction's saved sources, verified byte for byte against its intent and
    // placed in the sandbox outside the exported workspace (no network needed, never copied back).
    if (admitted && !(await this.#placeSources(context, handle, plugin, admitted))) return;

    // 3. The agent's turn (not even started when a Stop came first).
    const early = watch.requested();
    if (early) {
      if (!(await this.#stopped(early, null))) await this.#finalize(context, started);
      return;
    }
    let exec: ExecResult;
    try {
      exec = await this.#runAgent(context, handle, plugin, signal);
    } catch (error) {
      // Before the exec call (the agent's run key could not be minted): no agent, nothing to keep.
      const outage = await this.requeueAfterOutage(error, "agent_start");
      if (outage.settled) return;
      if (await this.#stopIfRequested(context, watch, null)) return;
      if (outage.code) {
        await this.settleFailure(outage.code, `The agent could not be started: ${messageOf(error)}`);
        return;
      }
      await this.#afterExecFailure(context, started, error);
      return;
    }
    if (await this.#stopIfRequested(context, watch, exec)) {
      // R-LG-1: the legacy adapter still copies back after a Stop released its lease; a failure is a late report.
      if (context.runtimeMode === "legacy") await this.#legacyTurn(context, handle, plugin, exec);
      return;
    }
    // R-RR-1, R-RR-2: a legacy adapter restores the required files itself, without the coordinator.
    if (context.runtimeMode === "legacy") {
      await this.#legacyTurn(context, handle, plugin, exec);
      return;
    }

    // 4. The process adapter's result file (the finish API may have published one already).
    const resultFileNote = exec.resultFile === null ? null : await this.#publishResultFile(context, exec.resultFile);

    // 5. Finalize an accepted result, or fail the run.
    const after = decideAfterAgent({
      ...(await this.#readRunState(context.runId)),
      exit: exitOf(exec),
      resultFileNote,
    });
    if (after.kind === "not_running") {
      await this.#event("info", "run.settled_elsewhere", `The run was ${after.status} while the agent ran; nothing to finalize.`, { status: after.status });
      await this.#release("failed");
      return;
    }
    if (after.kind === "fail") {
      await this.settleFailure(after.code, after.message, "agent_exited");
      return;
    }
    await this.#finalize(context, started);
  }

  /**
   * Runtime selection: the lease's pinned plugin with the exec capability, in the exact allocation
   * the durable descriptor says was seeded. The descriptor is read back from the database (not the
   * copy in memory), so what the agent works on is what finalization will diff against; a missing,
   * malformed or mismatching descriptor stops the run before the agent starts.
   */
  async #selectRuntime(context: ReadyRunContext, handle: LeaseHandle, plugin: EnvironmentProvider, prepared: PreparedRunWorkspace): Promise<void> {
    const descriptor = await loadPreparedWorkspace(this.#deps.db, { companyId: context.companyId, runId: context.runId, issueId: context.issueId });
    if (descriptor.leaseId !== handle.leaseId || descriptor.seed.providerLeaseId !== handle.providerLeaseId || descriptor.seed.fingerprint !== prepared.descriptor.seed.fingerprint) {
      throw new DomainError("conflict", "prepared_workspace_mismatch", "The prepared workspace names another sandbox than the run's lease.");
    }
    requireCapability(plugin, "exec");
  }

  /**
   * R-RC-5: places the admitted reconstruction's sources (recovery/reconstruction/place-sources.ts)
   * and keeps the context the agent is told. False when the run was settled here: bytes that no
   * longer match the intent refuse the run as the handoff recheck does; a provider failure fails it.
   */
  async #placeSources(context: ReadyRunContext, handle: LeaseHandle, plugin: EnvironmentProvider, admitted: ReconstructionContext): Promise<boolean> {
    let placement: SourcesPlacement;
    try {
      placement = await placeReconstructionSources(this.#deps, { companyId: context.companyId, issueId: context.issueId, context: admitted, plugin, lease: handle });
    } catch (error) {
      const outage = await this.requeueAfterOutage(error, "sources");
      if (outage.settled) return false;
      await this.#providerFailure(outage.code ?? "reconstruction_sources_unplaced", "The reconstruction's saved sources could not be placed in the sandbox", error);
      return false;
    }
    if (placement.kind === "refused") {
      const message = `The reconstruction's run stopped before its agent started (${placement.code}): ${placement.message} Nothing was placed in the sandbox.`;
      await this.#refuseReconstruction(context.runId, admitted.intentId, placement.code, message, { attachmentId: placement.attachmentId }, { agentNeverStarted: true });
      return false;
    }
    const delivery = decideContextDelivery(placement.document, placement.kind === "placed" ? placement.file : null);
    if (delivery.kind === "too_large") {
      // The lease's pinned plugin cannot place files though the environment's could (a reused
      // sandbox of another plugin): refused here, still before the agent.
      const message = `The reconstruction's run stopped before its agent started (${delivery.code}): ${delivery.message}`;
      await this.#refuseReconstruction(context.runId, admitted.intentId, delivery.code, message, { contextBytes: delivery.bytes }, { agentNeverStarted: true });
      return false;
    }
    this.#reconstructionEnv = delivery.env;
    const sources = placement.context.sources;
    await this.#event(
      "info",
      placement.kind === "placed" ? "reconstruction.sources_placed" : "reconstruction.sources_by_url",
      placement.kind === "placed"
        ? `The ${admitted.attachments.length} saved source(s), verified against the intent, were placed in the sandbox outside its workspace (${"directory" in sources ? sources.directory : ""}).`
        : `The saved sources were not placed in the sandbox: ${"reason" in sources ? sources.reason : ""}`,
      {
        intentId: admitted.intentId,
        sources: { ...sources },
        attachmentIds: admitted.attachments.map((a) => a.attachmentId),
        context: { file: placement.kind === "placed" ? placement.file : null, sizeBytes: placement.document.bytes, sha256: placement.document.sha256, inlined: delivery.inlined },
      },
    );
    return true;
  }

  /**
   * R-RC-5: the refusal of a context too large to inline when the environment's provider cannot
   * place it as a file (context-delivery.ts), or null. Decided from the environment's plugin
   * before the lease is acquired; #placeSources decides again with the lease's own plugin.
   */
  #contextTooLargeFor(context: ReadyRunContext, admitted: ReconstructionContext): Extract<ContextDelivery, { kind: "too_large" }> | null {
    const plugin = this.#deps.registry.get(context.environmentPluginId);
    if (!plugin || hasCapability(plugin, "placeInputs")) return null;
    const delivery = decideContextDelivery(contextDocument(withSourcesByUrlOnly(admitted, plugin.pluginId)), null);
    return delivery.kind === "too_large" ? delivery : null;
  }

  /**
   * R-RC-5: a reconstruction's run refused (at its handoff recheck, or because its sources no longer
   * match): the run is settled like any setup failure and the decision withdrawn (its hold reopens).
   */
  async #refuseReconstruction(
    runId: string,
    intentId: string | null,
    code: string,
    message: string,
    payload: Prisma.InputJsonObject = {},
    refusal: { agentNeverStarted?: true } = {},
  ): Promise<void> {
    await this.#event("warn", "run.rejected", message, { ...payload, code, intentId });
    await this.settleFailure(code, message, "provider_failure", refusal);
    if (intentId) await withTransaction(this.#deps.db, (tx) => withdrawReconstruction(tx, { intentId, runId, code, message }));
  }

  /**
   * R-RC-7: after the agent's turn, a Stop without an accepted result cancels the run (the agent's
   * process group is already stopped: the exec returned). With an accepted result the Stop only
   * ended the agent's process: the result is finalized as usual (the finalizer owns it, R-ORP-1).
   * The read here is unlocked (a quick answer for the common case); whether the run is cancelled
   * is decided again under the run's row lock (R-FO-6: a finish committing in between wins).
   */
  async #stopIfRequested(context: ReadyRunContext, watch: StopWatch, exec: ExecResult | null): Promise<boolean> {
    const request = await watch.check().catch(() => watch.requested());
    if (!request) return false;
    const state = await this.#readRunState(context.runId);
    if (state.runStatus !== "running" || state.acceptedResultId) return false;
    return this.#stopped(request, exec);
  }

  /**
   * Cancels the stopped run with its workspace pinned, then releases the environment (R-RC-7).
   * False when nothing was cancelled because the run has an accepted result after all (R-FO-6):
   * the caller finalizes it, and the lease stays bound for that.
   */
  async #stopped(request: StopRequestRecord, exec: ExecResult | null): Promise<boolean> {
    const leaseId = this.#lease?.leaseId ?? null;
    const outcome = await cancelStoppedRun(this.#deps.db, {
      runId: this.#claimed.runId,
      request,
      controller: this.#deps.controller,
      agent: exec ? { exitCode: exec.exitCode, signal: exec.signal } : null,
      leaseId,
      ...(this.#deps.taskLockWaitMs !== undefined ? { taskLockWaitMs: this.#deps.taskLockWaitMs } : {}),
    });
    this.#log.info({ runId: this.#claimed.runId, outcome: outcome.kind }, "run stopped");
    // R-FO-6: an accepted result keeps its own path: copied back and applied, never cancelled away.
    if (outcome.kind === "result_accepted") return false;
    if (outcome.kind === "cancelled_retention_deferred") {
      // The source stays active, exactly as it is, for the stop-retention sweep's later pass.
      this.#leaseReleased = true;
      return true;
    }
    if (outcome.kind === "cancelled" && outcome.retention.outcome === "refused") {
      await this.#event("warn", "lease.left_for_operator", `The stopped run's lease was left as it is (${outcome.retention.reason}).`, { leaseId });
      this.#leaseReleased = true;
      return true;
    }
    // Pinned (or already retained): the ordinary stop-and-retain continues the recorded intent.
    await this.#release("failed");
    return true;
  }

  /** The legacy protocol's end of turn (legacy-run.ts), then the lease by policy (a held source: stop and retain, R-RR-3). */
  async #legacyTurn(context: ReadyRunContext, handle: LeaseHandle, plugin: EnvironmentProvider, exec: ExecResult): Promise<void> {
    const end = await finishLegacyTurn(this.#deps, { companyId: context.companyId, runId: context.runId, issueId: context.issueId, lease: handle, plugin, exec });
    this.#log.info({ runId: context.runId, outcome: end.kind }, "legacy turn settled");
    await this.#release(end.release);
  }

  /** exec threw (a provider failure or a lost reply): finalize an accepted result, else fail the run. */
  async #afterExecFailure(context: ReadyRunContext, started: number, error: unknown): Promise<void> {
    const after = decideAfterExecFailure(await this.#readRunState(context.runId));
    if (after.kind === "fail") {
      await this.#providerFailure("provider_exec_failed", "The agent could not be run", error, "provider_failure");
      return;
    }
    const code = codeOf(error, "provider_exec_failed");
    if (after.kind === "not_running") {
      await this.#event("info", "run.settled_elsewhere", `The run was ${after.status} while the agent ran; nothing to finalize.`, { status: after.status, code });
      await this.#release("failed");
      return;
    }
    await this.#event("warn", "agent.exec_failed_after_result", `The provider's answer to the agent's turn failed (${code}), but the run has an accepted result; finalizing it.`, {
      code,
      resultId: after.resultId,
    });
    await this.#finalize(context, started);
  }

  async #runAgent(context: ReadyRunContext, handle: LeaseHandle, plugin: EnvironmentProvider, signal: AbortSignal): Promise<ExecResult> {
    const { db } = this.#deps;
    // R-EX-6: the registry's one capability rule (advertised and implemented), a typed refusal otherwise.
    requireCapability(plugin, "exec");
    const runExec = plugin.exec as NonNullable<EnvironmentProvider["exec"]>;
    const output = new AgentOutputRecorder(db, { companyId: context.companyId, runId: context.runId }, this.#log, this.#deps.outputLimits ?? DEFAULT_OUTPUT_LIMITS);
    // Issue 13: the agent's own key for this run's finish call, revoked when its turn is over
    // (and by the database whenever the run ends, see runs/run-agent-key.ts).
    const runKey = await mintRunAgentKey(db, { companyId: context.companyId, agentId: context.agentId, runId: context.runId });
    const env: Record<string, string> = {
      ...context.adapter.env,
      COPYBACK_RUN_ID: context.runId,
      COPYBACK_ISSUE_ID: context.issueId,
      ...(this.#deps.apiUrl ? { COPYBACK_API_URL: this.#deps.apiUrl } : {}),
      [RUN_AGENT_KEY_VARIABLE]: runKey.secret,
      // R-RC-5: the fresh session's context: description, attachments with their hashes to verify
      // and where to read them (`path`, placed above; contentUrl), outcomes. Inline while small, and
      // as a file among the inputs where the provider places them (context-delivery.ts).
      ...(this.#reconstructionEnv ?? {}),
    };
    const started = Date.now();
    let exec: ExecResult;
    try {
      this.#agentLaunched = true;
      exec = await runExec.call(plugin, handle, {
        argv: context.argv,
        env,
        timeoutMs: context.adapter.timeoutSeconds * 1000,
        signal,
        onStart: async (process) => {
          // Stamped before any output line (the recorder holds lines until now).
          const startedAt = output.started();
          // R-OWN-12: the agent's process identity, recorded before it can do anything lasting.
          if (process) await recordAgentProcess(db, context.runId, process).catch((error: unknown) => this.#log.warn({ runId: context.runId, err: error }, "could not record the agent process"));
          await this.#event(
            "info",
            "agent.started",
            `The agent started${process ? ` (pid ${process.pid})` : ""}.`,
            { argv: context.argv, process: process ? { ...process } : null, timeoutSeconds: context.adapter.timeoutSeconds },
            startedAt,
          );
        },
        onOutput: (stream, chunk) => output.write(stream, chunk),
      });
    } finally {
      await revokeRunAgentKeys(db, context.runId).catch((error: unknown) => this.#log.warn({ runId: context.runId, err: error }, "could not revoke the run's agent key (it ends with the run)"));
      const summary = await output.close();
      if (summary.truncated) this.#log.warn({ runId: context.runId, ...summary }, "agent output truncated");
    }
    await this.#event(exec.exitCode === 0 ? "info" : "warn", "agent.exited", describeExit(exec), {
      exitCode: exec.exitCode,
      signal: exec.signal,
      timedOut: exec.timedOut,
      cancelled: exec.cancelled,
      durationMs: Date.now() - started,
      resultFile: exec.resultFile !== null,
      ...(exec.resourceLimits ? { resourceLimits: { ...exec.resourceLimits, enforcement: { ...exec.resourceLimits.enforcement } } } : {}),
    });
    if (exec.resourceLimits) {
      // Shown in the run's log on the run page: what the agent ran under, and what it hit.
      const { summary, hit } = exec.resourceLimits;
      await this.#event(hit ? "warn" : "info", hit ? "agent.resource_limit" : "agent.limits", hit ? `The agent hit a resource limit (${hit}). Limits: ${summary}.` : `Resource limits: ${summary}.`, {
        hit,
        enforcement: { ...exec.resourceLimits.enforcement },
      });
    }
    return exec;
  }

  /** Publishes the result file; returns a note for the failure message when it was not accepted. */
  async #publishResultFile(context: ReadyRunContext, text: string): Promise<string | null> {
    let document: unknown = text;
    try {
      document = JSON.parse(text);
    } catch {
      // Not JSON: published as is, so it is stored as a rejected result with its code.
    }
    try {
      const outcome = await publishRunResult(this.#deps.db, {
        runId: context.runId,
        agentId: context.agentId,
        dedupeKey: "result-file",
        document,
        source: "result_file",
      });
      if (outcome.kind === "accepted") return null;
      return `Its result file was rejected (${outcome.code}: ${outcome.message}).`;
    } catch (error) {
      if (isDomainError(error) && error.code === "result_already_accepted") {
        await this.#event("info", "result.file_ignored", "The result file was ignored: the run already has an accepted result (finish API).");
        return null;
      }
      await this.#event("warn", "result.file_unpublished", `The result file could not be published: ${messageOf(error)}`, { code: codeOf(error, "result_publish_failed") });
      return `Its result file could not be published (${codeOf(error, "result_publish_failed")}).`;
    }
  }

  /** Whether the run has an accepted result (the last line of defence's question, R-FO-6). */
  async hasAcceptedResult(): Promise<boolean> {
    return (await this.#acceptedResultId(this.#claimed.runId)) !== null;
  }

  async #readRunState(runId: string): Promise<{ runStatus: string; acceptedResultId: string | null }> {
    // Two independent reads side by side (one round trip of waiting before finalization, not two).
    const [run, acceptedResultId] = await Promise.all([
      this.#deps.db.heartbeatRun.findUnique({ where: { id: runId }, select: { status: true } }),
      this.#acceptedResultId(runId),
    ]);
    return { runStatus: run?.status ?? "missing", acceptedResultId };
  }

  /** The run's first accepted result, or null. */
  async #acceptedResultId(runId: string): Promise<string | null> {
    const accepted = await this.#deps.db.nativeRunResult.findFirst({ where: { runId, schemaStatus: "accepted" }, select: { id: true }, orderBy: { createdAt: "asc" } });
    return accepted?.id ?? null;
  }

  async #finalize(context: ReadyRunContext, started: number): Promise<void> {
    let outcome: FinalizeOutcome;
    const finalizing = finalizeRun(this.#deps, { runId: context.runId });
    // The worker's shutdown awaits this before it closes the database (a finalization cut off
    // mid-copy would leave a receipt that only an operator could release).
    this.#deps.finalizations?.add(finalizing);
    try {
      outcome = await finalizing;
    } catch (error) {
      this.#log.error({ runId: context.runId, err: error }, "finalization threw");
      if (leftForReconciler(error)) {
        // Ownership lost, the phase moved, or the database failed under it: the barrier may
        // already prove the files are on the host, so no failure is written here. The run, its
        // result and its lease stay for the reconciler, which judges the receipt (R-OWN-8, R-OWN-11).
        await this.#event("warn", "finalization.left_to_reconciler", `Finalization stopped before it settled (${codeOf(error, "finalization_interrupted")}); the reconciler continues it.`, {
          code: codeOf(error, "finalization_interrupted"),
        });
        return;
      }
      await this.settleFailure(codeOf(error, "finalization_failed"), `Finalization failed: ${messageOf(error)}`);
      return;
    } finally {
      this.#deps.finalizations?.delete(finalizing);
    }
    this.#log.info({ runId: context.runId, outcome: outcome.kind, ms: Date.now() - started }, "run finalized");
    if (outcome.kind === "busy") {
      // Another controller holds this run's finalization: it is exporting from this lease now, so
      // the lease is left to it (releasing would stop the sandbox under its copyback).
      await this.#event("info", "finalization.busy", "Another process is finalizing this run; the lease is left to it.");
      return;
    }
    if (outcome.kind === "owner_unverified") {
      // R-ORP-3: the hold keeps the run, its result and its lease exactly as they are.
      await this.#event("warn", "finalization.held", "An earlier copyback owner could not be verified; the run waits for an operator.", { actionId: outcome.actionId });
      return;
    }
    if (outcome.kind === "not_finalizable") {
      await this.#event("warn", "finalization.not_finalizable", `The run could not be finalized (${outcome.reason}).`, { reason: outcome.reason });
    }
    const lease = leaseOutcomeAfterFinalize(outcome);
    if (lease !== null) await this.#release(lease);
  }

  /**
   * The setup-failure handler of everything but the preparation: fails the run (if it is still
   * running) through the one terminal writer, which first pins a bound sandbox and opens the
   * file-recovery obligation when the run has no result (R-FO-1, R-FO-3); then releases the lease
   * by policy (a pinned lease: its stop-only intent is continued, never a destroy). Never throws.
   */
  async settleFailure(code: string, message: string, origin: FileRecoveryOrigin = "provider_failure", refusal: { agentNeverStarted?: true } = {}): Promise<void> {
    const outcome = await this.#failBeforeResult({ runId: this.#claimed.runId, code, message, origin, leaseId: this.#boundLeaseId, ...refusal });
    if (outcome.kind === "unwritten" || outcome.kind === "refused") {
      // R-ORP-3, R-FO-1: the failure is not recorded (its transaction was cut, or it is not this
      // executor's to settle), so the run is still `running` and nothing pins its sandbox. Released
      // now, the lease would be held by no rule and the next run of a reuse_by_environment
      // environment would reseed the agent's only files. It stays bound and active for the orphan
      // sweep, which pins it and opens the obligation with the failure (R-ORP-2).
      this.#log.warn({ runId: this.#claimed.runId, outcome: outcome.kind }, "run failure not recorded; its lease is left bound for the orphan sweep");
      this.#leaseReleased = true;
      return;
    }
    // R-FO-1 scope: a run refused before its agent started (and judged so by the terminal writer)
    // releases its sandbox as its policy says for a run that left nothing (release-policy.ts).
    await this.#release(outcome.kind === "failed" && outcome.reason === "agent_not_started" ? "agent_not_started" : "failed");
  }

  /**
   * The preparation's setup-failure handler (R-FO-3, R-FO-4): settles the failure through this
   * controller's exact live recovery claim in the transaction that pins the sandbox, opens the
   * obligation and fails the run. Refused (another owner, a stale claim): nothing is cleaned up;
   * the run and its lease are left to whoever holds the claim (the reconciler).
   */
  async #preparationFailure(error: unknown, codeOverride: string | null = null): Promise<void> {
    const code = codeOverride ?? codeOf(error, "workspace_prepare_failed");
    this.#log.warn({ runId: this.#claimed.runId, code, err: error }, "The sandbox workspace could not be prepared");
    if (isDomainError(error) && error.code === "preparation_claim_lost") {
      await this.#event("warn", "workspace.preparation_taken_over", "A recovery took this run's preparation over; this worker leaves the run and its sandbox to it.");
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
      runId: this.#claimed.runId,
      code,
      message,
      origin: "preparation_failure",
      leaseId: this.#boundLeaseId,
      preparation: { operationId: error.operationId, token: error.claimToken },
    });
    if (outcome.kind === "refused" || outcome.kind === "unwritten") {
      // R-FO-4: not this controller's live claim (or nothing could be written): no cleanup here.
      this.#log.warn({ runId: this.#claimed.runId, outcome: outcome.kind }, "preparation failure not settled here; the lease is left as it is");
      this.#leaseReleased = true;
      return;
    }
    await this.#release("failed");
  }

  /**
   * Issue 20: a database failure before the agent was started sends the run back to the queue
   * (requeue-after-database-failure.ts). `settled`: the run is requeued, someone else's now, or
   * left to the reconciler (a preparation claim that is not this executor's, R-FO-4; a database
   * still down after the wait: the orphan sweep, R-ORP-2), and the caller does nothing more.
   * Otherwise the caller fails the run as before; `code` replaces its failure code when the run
   * has used up its requeues for the database (or settling met another failure).
   */
  async requeueAfterOutage(error: unknown, step: SetupStep, preparation?: { operationId: string; token: string }): Promise<{ settled: true } | { settled: false; code: string | null }> {
    const failure = databaseFailureIn(error);
    if (decideSetupFailure({ databaseFailure: failure !== null, agentLaunched: this.#agentLaunched }).kind === "fail") return { settled: false, code: null };
    const runId = this.#claimed.runId;
    this.#log.warn({ runId, step, err: failure }, "database failure before the agent started; sending the run back to the queue");
    const outcome = await requeueAfterDatabaseFailure(
      { db: this.#deps.db, registry: this.#deps.registry, controller: this.#deps.controller },
      { runId, companyId: this.#claimed.companyId, step, error: failure, ...(preparation ? { preparation } : {}) },
      { signal: this.#workerSignal, ...(this.#deps.databaseOutageMs !== undefined ? { waitMs: this.#deps.databaseOutageMs } : {}) },
    );
    switch (outcome.kind) {
      case "requeued":
      case "settled_elsewhere":
        this.#log.info({ runId, step, outcome: outcome.kind, leases: outcome.leases }, "run sent back to the queue after a database failure");
        this.#leaseReleased = true;
        return { settled: true };
      case "preparation_refused":
        await this.#event("warn", "workspace.preparation_claim_refused", `The database failed during the preparation, whose recovery claim is no longer this worker's (${outcome.reason}); the run and its sandbox are left to the claim's holder.`, { reason: outcome.reason, code: DATABASE_UNAVAILABLE });
        this.#leaseReleased = true;
        return { settled: true };
      case "gave_up":
        // Nothing can be written: the orphan sweep finds the run no longer executed here (R-ORP-2).
        this.#log.error({ runId, step, err: outcome.error }, "the database stayed unavailable; the run is left to the reconciler");
        this.#leaseReleased = true;
        return { settled: true };
      case "requeues_spent":
        await this.#event("warn", "run.requeues_spent", requeuesSpentMessage(step, outcome.requeues), { reason: DATABASE_UNAVAILABLE, step, requeues: outcome.requeues });
        return { settled: false, code: DATABASE_UNAVAILABLE };
      case "unsettled":
        this.#log.error({ runId, step, err: outcome.error }, "the run could not be sent back to the queue; failing it");
        return { settled: false, code: DATABASE_UNAVAILABLE };
    }
  }

  /** The one terminal writer (recovery/file-recovery.ts); never throws. */
  async #failBeforeResult(input: FailBeforeResultInput): Promise<FailBeforeResultOutcome | { kind: "unwritten" }> {
    try {
      const outcome = await failRunBeforeResult(this.#deps.db, input);
      if (outcome.kind === "files_retained") {
        this.#log.warn({ runId: input.runId, leaseId: outcome.leaseId, actionId: outcome.actionId }, "run failed before its result; its sandbox is kept for file recovery");
      }
      return outcome;
    } catch (error) {
      this.#log.error({ runId: input.runId, code: input.code, err: error }, "could not mark the run failed");
      return { kind: "unwritten" };
    }
  }

  async #providerFailure(fallbackCode: string, what: string, error: unknown, origin: FileRecoveryOrigin = "provider_failure"): Promise<void> {
    const code = codeOf(error, fallbackCode);
    this.#log.warn({ runId: this.#claimed.runId, code, err: error }, what);
    await this.settleFailure(code, `${what}: ${messageOf(error)}`, origin);
  }

  async #release(outcome: RunEndForLease): Promise<void> {
    const lease = this.#lease;
    if (!lease || this.#leaseReleased) return;
    this.#leaseReleased = true;
    try {
      const released = await releaseLeaseByPolicy(this.#deps.db, this.#deps.registry, { leaseId: lease.leaseId, runId: this.#claimed.runId, outcome });
      if (released.kind === "pending_cleanup" || released.kind === "failed") {
        // The stop or destroy was not confirmed (a failed call, a lost reply): the lease keeps its
        // intent for the restart sweep (R-SO-1), never released or destroyed on a guess.
        const code = released.kind === "failed" ? "lease.release_failed" : "lease.cleanup_pending";
        await this.#event("warn", code, `The lease was not released after a ${RUN_END_WORDS[outcome]} run (${released.code}): ${released.message}`, {
          leaseId: lease.leaseId,
          outcome,
          result: released.kind,
          code: released.code,
        });
        return;
      }
      await this.#event("info", "lease.released", `Lease released by policy after a ${RUN_END_WORDS[outcome]} run.`, { leaseId: lease.leaseId, outcome, result: released.kind });
    } catch (error) {
      this.#log.error({ runId: this.#claimed.runId, leaseId: lease.leaseId, err: error }, "lease release failed");
      await this.#event("warn", "lease.release_failed", `The lease could not be released by policy: ${messageOf(error)}`, {
        leaseId: lease.leaseId,
        code: codeOf(error, "lease_release_failed"),
      });
    }
  }

  async #event(level: Level, code: string, message: string, payload?: Prisma.InputJsonObject, createdAt?: Date): Promise<void> {
    try {
      await recordRunEvent(this.#deps.db, { companyId: this.#claimed.companyId, runId: this.#claimed.runId, level, code, message, payload, createdAt });
    } catch (error) {
      this.#log.warn({ runId: this.#claimed.runId, code, err: error }, "could not record a run event");
    }
  }
}

const RUN_END_WORDS: Record<RunEndForLease, string> = { committed: "committed", failed: "failed", agent_not_started: "refused (its agent never started)" };

function exitOf(exec: ExecResult): AgentExit {
  return { exitCode: exec.exitCode, signal: exec.signal, timedOut: exec.timedOut, cancelled: exec.cancelled, resourceLimit: exec.resourceLimits?.hit ?? null };
}

function describeExit(exec: ExecResult): string {
  if (exec.cancelled) return "The agent was cancelled.";
  if (exec.timedOut) return "The agent ran past its time limit and was killed.";
  if (exec.exitCode === null) return `The agent was killed by ${exec.signal ?? "a signal"}.`;
  return `The agent exited with code ${exec.exitCode}.`;
}

/**
 * Which finalization errors leave the run to the reconciler instead of failing it: ownership loss
 * and a moved phase (someone else owns the outcome), and anything that is not a domain refusal
 * (a database or infrastructure failure says nothing about the files).
 */
function leftForReconciler(error: unknown): boolean {
  if (isOwnershipLoss(error)) return true;
  if (!isDomainError(error)) return true;
  return error.code === "finalization_phase_changed";
}

function codeOf(error: unknown, fallback: string): string {
  if (isDomainError(error)) return error.code;
  return fallback;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
