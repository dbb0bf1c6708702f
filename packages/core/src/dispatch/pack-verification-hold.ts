// R-PV-1: holding a run whose agent pack could not be verified (two inconclusive reads). In ONE
// transaction: the run goes back to the queue (compare-and-set on running and this controller, as
// requeue-run.ts: controller cleared, its untouched `observed` coordinator removed), the board-owned
// hold runner_remote_provider_verification_unavailable is opened, and the run is marked held by it,
// so the claim skips it (claim-runs.ts) until an operator's reverify resolves the hold. The task
// keeps its status and owner; its notice and Recovery details show the hold. The caller released
// the lease by policy first (no agent ran: nothing of the task's is in the sandbox).
import { withTransaction, type PrismaClient } from "@copyback/db/client";
import { markHeldByPackVerification, type PackRead } from "../records/agent-pack-verification";
import { openPackVerificationUnavailableAction } from "../records/actions";
import type { ProcessIdentity } from "../process/process-identity";
import { recordRunEvent } from "../records/run-log";

export interface PackHoldInput {
  runId: string;
  companyId: string;
  issueId: string;
  controller: ProcessIdentity;
  lastLeaseId: string | null;
  pluginId: string | null;
  pack: { directory: string; runtime: string; version: string; digest: string };
  reads: PackRead[];
}

/** The hold's action id, or null when the run was no longer this controller's running run (nothing written). */
export async function holdForPackVerification(db: PrismaClient, input: PackHoldInput): Promise<string | null> {
  return withTransaction(db, async (tx) => {
    const updated = await tx.heartbeatRun.updateMany({
      where: { id: input.runId, status: "running", controllerPid: input.controller.pid, controllerProcessStart: input.controller.startTime, controllerHost: input.controller.host },
      data: { status: "queued", startedAt: null, nativePhase: null, controllerPid: null, controllerProcessStart: null, controllerBootId: null, controllerHost: null },
    });
    if (updated.count !== 1) return null;
    await tx.nativeRunFinalization.deleteMany({ where: { runId: input.runId, phase: "observed", resultId: null } });
    const opened = await openPackVerificationUnavailableAction(tx, {
      companyId: input.companyId,
      issueId: input.issueId,
      runId: input.runId,
      lastLeaseId: input.lastLeaseId,
      pluginId: input.pluginId,
      pack: input.pack,
      reads: input.reads,
    });
    await markHeldByPackVerification(tx, { runId: input.runId, actionId: opened.actionId });
    await recordRunEvent(tx, {
      companyId: input.companyId,
      runId: input.runId,
      level: "warn",
      code: "agent_pack.held",
      message:
        "The agent pack could not be verified (two verification reads ended without an answer). The run is held in the queue before its first turn; a runtime manager re-verifies it from Recovery details once the provider answers again.",
      payload: { actionId: opened.actionId, reads: input.reads.length },
    });
    return opened.actionId;
  });
}
