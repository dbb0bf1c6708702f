// R-PV-1: the agent-pack step of executeRun, between the sandbox's preparation and the agent's
// turn: verify (verify-agent-pack.ts), then settle what it decided. No agent was started on any
// path here, so nothing of the task's work is in the sandbox:
//   verified / none   the turn goes on (with COPYBACK_AGENT_PACK_DIR when there is a pack);
//   refused           the run fails with the stable code (incompatible, unreadable, unsupported),
//                     its sandbox released as its policy says for a run whose agent never started;
//   hold              the lease is released the same way, then the run is held in the queue with
//                     its hold (pack-verification-hold.ts);
//   stopped           the Stop's ordinary cancellation (stop-handling.ts), or, when the worker
//                     itself is stopping, back to the queue;
//   lost              the run is no longer this controller's: nothing more is done here.
// A database failure sends the run back to the queue like every step before the agent's start.
import { messageOf } from "../errors";
import type { EnvironmentProvider, LeaseHandle } from "../providers/types";
import { finalizeAccepted } from "./finalize-turn";
import { holdForPackVerification } from "./pack-verification-hold";
import type { ReadyRunContext } from "./run-context";
import type { RunLeaseState } from "./run-lease-state";
import { requeueRun } from "./requeue-run";
import type { RunScope } from "./run-scope";
import { stopped } from "./stop-handling";
import type { StopWatch } from "./stop-watch";
import { verifyAgentPack, type PackVerification } from "./verify-agent-pack";

/** The agent's extra environment for its pack ({} without one), or null when the run was settled here. */
export async function packTurn(
  run: RunScope,
  lease: RunLeaseState,
  input: { context: ReadyRunContext; handle: LeaseHandle; plugin: EnvironmentProvider; watch: StopWatch; started: number },
): Promise<Record<string, string> | null> {
  const { context, handle, plugin, watch } = input;
  let verification: PackVerification;
  try {
    verification = await verifyAgentPack(run, { runId: context.runId, pack: context.adapter.agentPack, handle, plugin, signal: watch.signal });
  } catch (error) {
    const outage = await lease.requeueAfterOutage(error, "agent_pack");
    if (outage.settled) return null;
    await lease.settleFailure(outage.code ?? "agent_pack_verification_failed", `The agent pack could not be verified: ${messageOf(error)}`, "provider_failure", { agentNeverStarted: true });
    return null;
  }
  switch (verification.kind) {
    case "none":
      return {};
    case "verified":
      return verification.env;
    case "refused":
      await lease.settleFailure(verification.code, verification.message, "provider_failure", { agentNeverStarted: true });
      return null;
    case "stopped": {
      const request = await watch.check().catch(() => watch.requested());
      if (request) {
        if (!(await stopped(run, lease, request, null))) await finalizeAccepted(run, lease, context, input.started);
        return null;
      }
      // The worker itself is stopping (a drain): the read it cut proves nothing and is not
      // counted; the run goes back to the queue with the reads it did record.
      await lease.release("agent_not_started");
      await requeueRun(run.deps.db, {
        runId: context.runId,
        companyId: context.companyId,
        controller: run.deps.controller,
        code: "worker_stopping",
        message: "The worker stopped during the agent pack's verification; the run went back to the queue before its first turn.",
      }).catch((error: unknown) => run.log.error({ runId: context.runId, err: error }, "could not requeue the run; the orphan sweep settles it"));
      return null;
    }
    case "lost":
      run.log.warn({ runId: context.runId }, "the run changed hands during its agent-pack verification; this worker leaves it");
      lease.leaveAsItIs();
      return null;
    case "hold": {
      await lease.release("agent_not_started");
      const { pack, reads } = verification;
      const actionId = await holdForPackVerification(run.deps.db, {
        runId: context.runId,
        companyId: context.companyId,
        issueId: context.issueId,
        controller: run.deps.controller,
        lastLeaseId: handle.leaseId,
        pluginId: handle.pluginId,
        pack: { directory: pack.directory, runtime: pack.manifest.runtime, version: pack.manifest.version, digest: pack.digest },
        reads,
      }).catch((error: unknown) => {
        // Nothing written: the run is still running under this controller, which no longer
        // executes it; the orphan sweep settles it (no agent ever started, R-ORP-2).
        run.log.error({ runId: context.runId, err: error }, "could not hold the run for its agent-pack verification");
        return null;
      });
      run.log.warn({ runId: context.runId, actionId }, "run held: its agent pack could not be verified");
      return null;
    }
  }
}
