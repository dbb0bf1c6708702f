// A Stop met by the executor (R-RC-7): before the agent's turn (the lease wait, or the turn not
// yet started) or after it. A Stop without an accepted result cancels the run with its workspace
// pinned and settles the lease; an accepted result keeps its own path and is finalized (R-FO-6).
import type { ExecResult } from "../providers/types";
import type { StopRequestRecord } from "../records/run-stop-records";
import { cancelStoppedRun } from "../runs/cancel-stopped-run";
import type { ReadyRunContext } from "./run-context";
import type { RunLeaseState } from "./run-lease-state";
import type { RunScope } from "./run-scope";
import { readRunState } from "./run-state";
import type { StopWatch } from "./stop-watch";

/**
 * R-RC-7: after the agent's turn, a Stop without an accepted result cancels the run (the agent's
 * process group is already stopped: the exec returned). With an accepted result the Stop only
 * ended the agent's process: the result is finalized as usual (the finalizer owns it, R-ORP-1).
 * The read here is unlocked (a quick answer for the common case); whether the run is cancelled
 * is decided again under the run's row lock (R-FO-6: a finish committing in between wins).
 */
export async function stopIfRequested(run: RunScope, lease: RunLeaseState, context: ReadyRunContext, watch: StopWatch, exec: ExecResult | null): Promise<boolean> {
  const request = await watch.check().catch(() => watch.requested());
  if (!request) return false;
  const state = await readRunState(run.deps.db, context.runId);
  if (state.runStatus !== "running" || state.acceptedResultId) return false;
  return stopped(run, lease, request, exec);
}

/**
 * Cancels the stopped run with its workspace pinned, then releases the environment (R-RC-7).
 * False when nothing was cancelled because the run has an accepted result after all (R-FO-6):
 * the caller finalizes it, and the lease stays bound for that.
 */
export async function stopped(run: RunScope, lease: RunLeaseState, request: StopRequestRecord, exec: ExecResult | null): Promise<boolean> {
  const { deps, claimed, log } = run;
  const leaseId = lease.heldLeaseId;
  const outcome = await cancelStoppedRun(deps.db, {
    runId: claimed.runId,
    request,
    controller: deps.controller,
    agent: exec ? { exitCode: exec.exitCode, signal: exec.signal } : null,
    leaseId,
    ...(deps.taskLockWaitMs !== undefined ? { taskLockWaitMs: deps.taskLockWaitMs } : {}),
  });
  log.info({ runId: claimed.runId, outcome: outcome.kind }, "run stopped");
  // R-FO-6: an accepted result keeps its own path: copied back and applied, never cancelled away.
  if (outcome.kind === "result_accepted") return false;
  if (outcome.kind === "cancelled_retention_deferred") {
    // The source stays active, exactly as it is, for the stop-retention sweep's later pass.
    lease.leaveAsItIs();
    return true;
  }
  if (outcome.kind === "cancelled" && outcome.retention.outcome === "refused") {
    await run.event("warn", "lease.left_for_operator", `The stopped run's lease was left as it is (${outcome.retention.reason}).`, { leaseId });
    lease.leaveAsItIs();
    return true;
  }
  // Pinned (or already retained): the ordinary stop-and-retain continues the recorded intent.
  await lease.release("failed");
  return true;
}
