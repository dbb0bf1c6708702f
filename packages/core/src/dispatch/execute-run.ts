// One claimed run, from its lease to a settled state (DESIGN.md section 3, "Dispatch" and
// "Finalization"): load the run's agent, environment and workspace; acquire the environment lease
// (a busy lease puts the run back in the queue); prepare the sandbox workspace; run the agent's
// command there with its output in the run log; publish the process adapter's result file; then
// finalize an accepted result through the copyback engine, or fail the run with the reason the
// agent gave none; release the lease by its policy. Every step writes a run event. This file is
// the recipe, top to bottom; each step's idea has its own file:
//   reconstruction-handoff.ts  a reconstruction's recheck, refusal and sources (R-RC-5)
//   pack-turn.ts               the agent pack's placement and verification before the turn (R-PV-1)
//   agent-turn.ts              the runtime selection and the agent's exec
//   publish-result-file.ts     the process adapter's result file
//   stop-handling.ts           a Stop met before or after the agent's turn (R-RC-7)
//   finalize-turn.ts           what the turn means, and the finalization of an accepted result
//   run-lease-state.ts         the run's lease state, failure settlement and the lease's release
//
// executeRun never throws: the dispatcher runs it in the background, so every failure is settled
// here (failRun with a stable code, the lease released by policy) or, when even that fails, logged
// and left to the reconciler (the run keeps this controller's identity, recorded at claim time).
//
// Failures before a result (R-FO-1, R-FO-3): once a sandbox is bound to the run, both
// setup-failure handlers (the preparation's, preparationFailure, and the provider's and agent's,
// settleFailure: exec errors, an agent that exits without a result, a descriptor read failing in
// runtime selection) go through ONE terminal writer, recovery/file-recovery.ts: the exact sandbox
// is pinned and the file-recovery obligation opened in the transaction that fails the run, before
// the terminal write and before the provider cleanup (the lease's release) runs. A prepared
// workspace is no export receipt (R-FO-2); an accepted result keeps its own path (R-FO-6). An owned
// preparation failure is settled only through this controller's exact live recovery claim; another
// owner or a stale claim settles nothing and this controller cleans nothing up (R-FO-4).
//
// A database failure before the agent was started: the run is neither failed nor pinned but goes
// back to the queue (database-outage-policy.ts, requeue-after-database-failure.ts), at every step
// up to the provider's exec call: the run's load, the lease's acquisition and bind, the
// preparation, the runtime selection, a reconstruction's sources, the agent's run key. What the
// attempt created is settled by policy first; a database that stays down past the wait leaves the
// run to the reconciler's orphan sweep (R-ORP-2), never running forever. Recording the agent's
// process comes after its start and stays best-effort (R-OWN-12: the agent may already write).
import { acquireLease } from "../leases/acquire-lease";
import type { EnvironmentProvider, ExecResult } from "../providers/types";
import type { StopRequestRecord } from "../records/run-stop-records";
import { recordLegacyLeaseSnapshot } from "../recovery/legacy/lease-snapshot";
import { isPreparationFailed, prepareRunWorkspace, type PreparedRunWorkspace } from "../workspace/prepare-run-workspace";
import { runAgent, selectRuntime } from "./agent-turn";
import type { ClaimedRunRef } from "./claimed-run";
import { silentDispatchLog } from "./dispatch-log";
import { isDomainError, messageOf } from "../errors";
import { afterAgentExit, afterExecFailure, finalizeAccepted, legacyTurn } from "./finalize-turn";
import { waitForLease } from "./lease-wait";
import { publishResultFile } from "./publish-result-file";
import { packTurn } from "./pack-turn";
import { placeSources, reconstructionHandoff } from "./reconstruction-handoff";
import { requeueRun } from "./requeue-run";
import { decideRunContext, loadRunContext, type ReadyRunContext } from "./run-context";
import { RunLeaseState } from "./run-lease-state";
import { runScope, type ExecuteRunDeps, type RunScope } from "./run-scope";
import { hasAcceptedResult } from "./run-state";
import { stopIfRequested, stopped } from "./stop-handling";
import { watchForStop, type StopWatch } from "./stop-watch";

export type { ExecuteRunDeps };

export async function executeRun(deps: ExecuteRunDeps, claimed: ClaimedRunRef, signal: AbortSignal): Promise<void> {
  const log = deps.log ?? silentDispatchLog;
  const run = runScope(deps, claimed, log);
  const lease = new RunLeaseState(run, signal);
  try {
    await execute(run, lease, signal);
  } catch (error) {
    // Last line of defence: a step threw past its own handling (a database outage, a bug).
    log.error({ runId: claimed.runId, err: error }, "run execution failed unexpectedly");
    // A database failure before the agent was started (the run's load, a Stop's cancel) sends
    // the run back to the queue; nothing of the task's work exists yet.
    const outage = await lease.requeueAfterOutage(error, "dispatch");
    if (outage.settled) return;
    // R-FO-6: an accepted result keeps its own export path. Failing the run here would drop it and
    // release its sandbox with the only copy of the work; instead this executor gives the run up
    // with its lease bound, and the reconciler's finalization sweep, which sees that this process
    // no longer executes it (controller-liveness.ts), finalizes the saved result. When even that
    // cannot be read, nothing is written either: the sweeps judge the run from what is recorded.
    const accepted = await hasAcceptedResult(deps.db, claimed.runId).catch(() => null);
    if (accepted !== false) {
      log.warn({ runId: claimed.runId, acceptedResult: accepted }, "run left to the reconciler: its accepted result (or whether it has one) outlives this executor's failure");
      return;
    }
    await lease.settleFailure(outage.code ?? "dispatch_internal_error", `The worker could not complete the run: ${messageOf(error)}`);
  }
}

async function execute(run: RunScope, lease: RunLeaseState, signal: AbortSignal): Promise<void> {
  const { db } = run.deps;
  const started = Date.now();
  const decision = decideRunContext(await loadRunContext(db, run.claimed.runId));
  if (decision.kind === "not_running") {
    run.log.info({ runId: run.claimed.runId, status: decision.status }, "claimed run is no longer running; nothing to do");
    return;
  }
  if (decision.kind === "reject") {
    await run.event("error", "run.rejected", decision.message, { code: decision.code });
    await lease.settleFailure(decision.code, decision.message);
    return;
  }
  const context = decision.context;
  // R-RC-7: a Stop recorded on the run aborts the lease wait and the agent's exec (stop-watch.ts).
  const watch = watchForStop(db, context.runId, signal, run.deps.stopPollMs);
  try {
    await executeReady(run, lease, context, watch, started);
  } finally {
    watch.close();
  }
}

async function executeReady(run: RunScope, lease: RunLeaseState, context: ReadyRunContext, watch: StopWatch, started: number): Promise<void> {
  const { deps } = run;
  const { db } = deps;
  const signal = watch.signal;
  await run.event("info", "run.dispatched", "The worker loaded the run's agent, environment and workspace.", {
    controller: { ...deps.controller },
    environmentId: context.environmentId,
    executionWorkspaceId: context.executionWorkspaceId,
  });

  // R-RC-5: a reconstruction's run is rechecked at its provider handoff, before any sandbox.
  const handoff = await reconstructionHandoff(run, lease, context);
  if (handoff.kind === "refused") return;
  const admitted = handoff.kind === "admitted" ? handoff.admitted : null;

  // 1. The environment lease. A busy lease is waited for briefly, then the run is requeued.
  const acquired = await waitForLease(
    () =>
      acquireLease(db, deps.registry, {
        companyId: context.companyId,
        runId: context.runId,
        issueId: context.issueId,
        environmentId: context.environmentId,
        executionWorkspaceId: context.executionWorkspaceId,
      }),
    { maxWaitMs: deps.leaseWaitMs ?? 15_000, signal, onBusy: () => run.event("info", "lease.busy", "Another run holds this environment's lease for the workspace; waiting.") },
  ).catch((error: unknown) => ({ kind: "error" as const, error }));
  if (acquired.kind === "busy" && watch.requested()) {
    if (!(await stopped(run, lease, watch.requested() as StopRequestRecord, null))) await finalizeAccepted(run, lease, context, started);
    return;
  }
  if (acquired.kind === "busy") {
    const requeued = await requeueRun(db, {
      runId: context.runId,
      companyId: context.companyId,
      controller: deps.controller,
      code: "lease_busy",
      message: "The environment's lease for this workspace is held by another run; the run went back to the queue.",
    });
    run.log.info({ runId: context.runId, requeued }, "lease busy; run requeued");
    return;
  }
  if (acquired.kind === "error") {
    const outage = await lease.requeueAfterOutage(acquired.error, "acquisition");
    if (outage.settled) return;
    // Issue 21: a missing or rejected key (the environment's credential check, before any lease)
    // fails the run once, visibly, with the variable to fix; nothing retries it on its own.
    // The payload names the environment so its page and `copyback environment list` show the last refusal.
    const credentials = credentialRefusalOf(acquired.error);
    if (credentials) await run.event("error", "environment.credentials_refused", credentials.message, { ...credentials.payload, environmentId: context.environmentId });
    await lease.providerFailure(outage.code ?? "provider_acquire_failed", "The environment could not be acquired", acquired.error);
    return;
  }
  const { lease: acquiredLease, handle, reused, isolated } = acquired.value;
  lease.bind(acquiredLease.id);
  await run.event("info", "lease.acquired", isolated ? "Sandbox acquired (isolated)." : "Sandbox acquired (NOT isolated: the agent is not confined to its sandbox).", {
    leaseId: acquiredLease.id,
    pluginId: handle.pluginId,
    providerLeaseId: handle.providerLeaseId,
    policy: acquiredLease.leasePolicy,
    reused,
    isolated,
  });
  let plugin: EnvironmentProvider;
  try {
    plugin = deps.registry.forLease({ pluginId: acquiredLease.pluginId, provider: acquiredLease.provider }); // R-EX-6
  } catch (error) {
    await lease.providerFailure("provider_plugin_unavailable", "The lease's provider plugin is unavailable", error, "provider_failure");
    return;
  }
  lease.hold({ leaseId: acquiredLease.id, handle, plugin });

  // 2. The sandbox workspace: baseline manifest and seed from one locked view of the host.
  let prepared: PreparedRunWorkspace;
  try {
    // R-FO-4: the preparation carries this controller's recovery claim.
    prepared = await prepareRunWorkspace(deps, { runId: context.runId, lease: handle, plugin, recoveryClaim: { holder: deps.controller, ttlMs: deps.preparationClaimMs } });
    // R-LG-1: a legacy run's exact lease snapshot, recorded before its adapter is dispatched.
    if (context.runtimeMode === "legacy") await recordLegacyLeaseSnapshot(db, { runId: context.runId, leaseId: acquiredLease.id, realizedRoot: prepared.descriptor.hostPath });
  } catch (error) {
    const outage = await lease.requeueAfterOutage(error, "preparation", isPreparationFailed(error) ? { operationId: error.operationId, token: error.claimToken } : undefined);
    if (outage.settled) return;
    await lease.preparationFailure(error, outage.code);
    return;
  }

  // Runtime selection: the agent runs in exactly the sandbox that was prepared, read back from
  // its durable descriptor; a failing read is a setup failure like any other (R-FO-3).
  try {
    await selectRuntime(run, context, handle, plugin, prepared);
  } catch (error) {
    const outage = await lease.requeueAfterOutage(error, "runtime_selection");
    if (outage.settled) return;
    await lease.providerFailure(outage.code ?? "runtime_selection_failed", "The agent's runtime could not be selected", error, "runtime_selection_failure");
    return;
  }

  // R-RC-5: a reconstruction's saved sources, verified byte for byte against its intent and
  // placed in the sandbox outside the exported workspace (no network needed, never copied back).
  let reconstructionEnv: Record<string, string> | null = null;
  if (admitted) {
    reconstructionEnv = await placeSources(run, lease, context, handle, plugin, admitted);
    if (reconstructionEnv === null) return;
  }

  // R-PV-1: the agent pack, placed and verified in the sandbox before the agent's turn (pack-turn.ts).
  const packEnv = await packTurn(run, lease, { context, handle, plugin, watch, started });
  if (packEnv === null) return;

  // 3. The agent's turn (not even started when a Stop came first).
  const early = watch.requested();
  if (early) {
    if (!(await stopped(run, lease, early, null))) await finalizeAccepted(run, lease, context, started);
    return;
  }
  let exec: ExecResult;
  try {
    exec = await runAgent(run, lease, { context, handle, plugin, signal, reconstructionEnv, packEnv });
  } catch (error) {
    // Before the exec call (the agent's run key could not be minted): no agent, nothing to keep.
    const outage = await lease.requeueAfterOutage(error, "agent_start");
    if (outage.settled) return;
    if (await stopIfRequested(run, lease, context, watch, null)) return;
    if (outage.code) {
      await lease.settleFailure(outage.code, `The agent could not be started: ${messageOf(error)}`);
      return;
    }
    await afterExecFailure(run, lease, context, started, error);
    return;
  }
  if (await stopIfRequested(run, lease, context, watch, exec)) {
    // R-LG-1: the legacy adapter still copies back after a Stop released its lease; a failure is a late report.
    if (context.runtimeMode === "legacy") await legacyTurn(run, lease, context, handle, plugin, exec);
    return;
  }
  // R-RR-1, R-RR-2: a legacy adapter restores the required files itself, without the coordinator.
  if (context.runtimeMode === "legacy") {
    await legacyTurn(run, lease, context, handle, plugin, exec);
    return;
  }

  // 4. The process adapter's result file (the finish API may have published one already).
  const resultFileNote = exec.resultFile === null ? null : await publishResultFile(run, context, exec.resultFile);

  // 5. Finalize an accepted result, or fail the run.
  await afterAgentExit(run, lease, context, exec, resultFileNote, started);
}

/** provider_credentials_missing / _rejected, as a run event's words and payload (the variable, never a key). */
function credentialRefusalOf(error: unknown): { message: string; payload: { code: string; variable?: string } } | null {
  if (!isDomainError(error) || (error.code !== "provider_credentials_missing" && error.code !== "provider_credentials_rejected")) return null;
  const variable = (error.details as { variable?: unknown } | undefined)?.variable;
  return {
    message: `The environment's credentials were refused before any sandbox was made: ${error.message} Fix the key, then wake the agent again.`,
    payload: { code: error.code, ...(typeof variable === "string" ? { variable } : {}) },
  };
}
