// After the agent's turn: what it means for the run (agent-outcome.ts decides), then an accepted
// result finalized through the copyback engine (finalization/finalize-run.ts) and the lease settled
// by the outcome, or the run failed with the reason the agent gave none. A legacy run ends its turn
// by its own protocol (legacy-run.ts).
import { codeOf, isDomainError, messageOf } from "../errors";
import { leaseOutcomeAfterFinalize } from "../finalization/finalize-outcome-policy";
import { finalizeRun, isOwnershipLoss, type FinalizeOutcome } from "../finalization/finalize-run";
import type { EnvironmentProvider, ExecResult, LeaseHandle } from "../providers/types";
import { decideAfterAgent, decideAfterExecFailure } from "./agent-outcome";
import { exitOf } from "./agent-turn";
import { finishLegacyTurn } from "./legacy-run";
import type { ReadyRunContext } from "./run-context";
import type { RunLeaseState } from "./run-lease-state";
import type { RunScope } from "./run-scope";
import { readRunState } from "./run-state";

/** The agent exited: finalize an accepted result, or fail the run (its result file's note says why it has none). */
export async function afterAgentExit(run: RunScope, lease: RunLeaseState, context: ReadyRunContext, exec: ExecResult, resultFileNote: string | null, started: number): Promise<void> {
  const after = decideAfterAgent({
    ...(await readRunState(run.deps.db, context.runId)),
    exit: exitOf(exec),
    resultFileNote,
  });
  if (after.kind === "not_running") {
    await run.event("info", "run.settled_elsewhere", `The run was ${after.status} while the agent ran; nothing to finalize.`, { status: after.status });
    await lease.release("failed");
    return;
  }
  if (after.kind === "fail") {
    await lease.settleFailure(after.code, after.message, "agent_exited");
    return;
  }
  await finalizeAccepted(run, lease, context, started);
}

/** exec threw (a provider failure or a lost reply): finalize an accepted result, else fail the run. */
export async function afterExecFailure(run: RunScope, lease: RunLeaseState, context: ReadyRunContext, started: number, error: unknown): Promise<void> {
  const after = decideAfterExecFailure(await readRunState(run.deps.db, context.runId));
  if (after.kind === "fail") {
    await lease.providerFailure("provider_exec_failed", "The agent could not be run", error, "provider_failure");
    return;
  }
  const code = codeOf(error, "provider_exec_failed");
  if (after.kind === "not_running") {
    await run.event("info", "run.settled_elsewhere", `The run was ${after.status} while the agent ran; nothing to finalize.`, { status: after.status, code });
    await lease.release("failed");
    return;
  }
  await run.event("warn", "agent.exec_failed_after_result", `The provider's answer to the agent's turn failed (${code}), but the run has an accepted result; finalizing it.`, {
    code,
    resultId: after.resultId,
  });
  await finalizeAccepted(run, lease, context, started);
}

/** The legacy protocol's end of turn (legacy-run.ts), then the lease by policy (a held source: stop and retain, R-RR-3). */
export async function legacyTurn(run: RunScope, lease: RunLeaseState, context: ReadyRunContext, handle: LeaseHandle, plugin: EnvironmentProvider, exec: ExecResult): Promise<void> {
  const end = await finishLegacyTurn(run.deps, { companyId: context.companyId, runId: context.runId, issueId: context.issueId, lease: handle, plugin, exec });
  run.log.info({ runId: context.runId, outcome: end.kind }, "legacy turn settled");
  await lease.release(end.release);
}

/** Finalizes the run's accepted result, then settles the lease as the outcome says (finalize-outcome-policy.ts). */
export async function finalizeAccepted(run: RunScope, lease: RunLeaseState, context: ReadyRunContext, started: number): Promise<void> {
  const { deps, log } = run;
  let outcome: FinalizeOutcome;
  const finalizing = finalizeRun(deps, { runId: context.runId });
  // The worker's shutdown awaits this before it closes the database (a finalization cut off
  // mid-copy would leave a receipt that only an operator could release).
  deps.finalizations?.add(finalizing);
  try {
    outcome = await finalizing;
  } catch (error) {
    log.error({ runId: context.runId, err: error }, "finalization threw");
    if (leftForReconciler(error)) {
      // Ownership lost, the phase moved, or the database failed under it: the barrier may
      // already prove the files are on the host, so no failure is written here. The run, its
      // result and its lease stay for the reconciler, which judges the receipt (R-OWN-8, R-OWN-11).
      await run.event("warn", "finalization.left_to_reconciler", `Finalization stopped before it settled (${codeOf(error, "finalization_interrupted")}); the reconciler continues it.`, {
        code: codeOf(error, "finalization_interrupted"),
      });
      return;
    }
    await lease.settleFailure(codeOf(error, "finalization_failed"), `Finalization failed: ${messageOf(error)}`);
    return;
  } finally {
    deps.finalizations?.delete(finalizing);
  }
  log.info({ runId: context.runId, outcome: outcome.kind, ms: Date.now() - started }, "run finalized");
  if (outcome.kind === "busy") {
    // Another controller holds this run's finalization: it is exporting from this lease now, so
    // the lease is left to it (releasing would stop the sandbox under its copyback).
    await run.event("info", "finalization.busy", "Another process is finalizing this run; the lease is left to it.");
    return;
  }
  if (outcome.kind === "owner_unverified") {
    // R-ORP-3: the hold keeps the run, its result and its lease exactly as they are.
    await run.event("warn", "finalization.held", "An earlier copyback owner could not be verified; the run waits for an operator.", { actionId: outcome.actionId });
    return;
  }
  if (outcome.kind === "not_finalizable") {
    await run.event("warn", "finalization.not_finalizable", `The run could not be finalized (${outcome.reason}).`, { reason: outcome.reason });
  }
  const settled = leaseOutcomeAfterFinalize(outcome);
  if (settled !== null) await lease.release(settled);
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
