// A claimed run that cannot get its environment lease yet (another run holds the one ephemeral
// lease of that environment and workspace) goes back to the queue: status queued, start time and
// controller cleared, its untouched `observed` coordinator row removed (the next claim creates it
// again), with a run event saying why. Compare-and-set on the running status and this controller:
// a run settled or re-owned meanwhile is left alone. Also the way back for a run whose setup met a
// database failure before its agent started (requeue-after-database-failure.ts).
import { withTransaction, type Prisma, type PrismaClient } from "@copyback/db/client";
import type { ProcessIdentity } from "../process/process-identity";
import { recordRunEvent } from "../records/run-log";

export async function requeueRun(
  db: PrismaClient,
  input: { runId: string; companyId: string; controller: ProcessIdentity; code: string; message: string; payload?: Prisma.InputJsonObject },
): Promise<boolean> {
  return withTransaction(db, async (tx) => {
    const updated = await tx.heartbeatRun.updateMany({
      where: {
        id: input.runId,
        status: "running",
        controllerPid: input.controller.pid,
        controllerProcessStart: input.controller.startTime,
        controllerHost: input.controller.host,
      },
      data: {
        status: "queued",
        startedAt: null,
        nativePhase: null,
        controllerPid: null,
        controllerProcessStart: null,
        controllerBootId: null,
        controllerHost: null,
      },
    });
    if (updated.count !== 1) return false;
    await tx.nativeRunFinalization.deleteMany({ where: { runId: input.runId, phase: "observed", resultId: null } });
    await recordRunEvent(tx, {
      companyId: input.companyId,
      runId: input.runId,
      level: "info",
      code: "run.requeued",
      message: input.message,
      payload: { reason: input.code, ...input.payload },
    });
    return true;
  });
}
