// The quiet period's wait: until the system settled, or the deadline (settle-deadline.ts) passed.
import type { PrismaClient } from "@copyback/db";
import { sleep } from "./loops/harness";
import { settleDeadline } from "./settle-deadline";
import { COMPANY_ID } from "./world";

/** Settled: no run queued or running without a hold, no coordinator in flight without a hold, no hold waiting for an attestation the harness can give. */
export async function waitSettled(prisma: PrismaClient, timeoutMs: number): Promise<boolean> {
  const clock = { startedAt: Date.now(), baseMs: timeoutMs };
  let deadline = settleDeadline(clock, null);
  let quietPasses = 0;
  while (Date.now() < deadline) {
    await sleep(1_000);
    try {
      const open = await prisma.issueRecoveryAction.findMany({ where: { companyId: COMPANY_ID, status: { in: ["active", "escalated"] } }, select: { runId: true } });
      // Fake runs whose sandbox died with its worker retry until the export retry budget is spent (relaxed in the checker).
      const lost = await prisma.nativeRunFinalization.findMany({ where: { companyId: COMPANY_ID, failureCode: "provider_sandbox_missing", phase: "retryable_failure" }, select: { runId: true } });
      const held = [...open.map((a) => a.runId).filter((r): r is string => r !== null), ...lost.map((l) => l.runId)];
      const busy = await prisma.heartbeatRun.count({ where: { companyId: COMPANY_ID, status: { in: ["queued", "running"] }, id: { notIn: held } } });
      const inFlight = await prisma.nativeRunFinalization.count({
        where: { companyId: COMPANY_ID, phase: { in: ["result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"] }, runId: { notIn: held } },
      });
      // The product's retry schedule decides how long a run may rightly take (settle-deadline.ts).
      const latest = await prisma.nativeRunFinalization.aggregate({
        where: { companyId: COMPANY_ID, phase: "retryable_failure", runId: { notIn: held } },
        _max: { nextAttemptAt: true },
      });
      deadline = settleDeadline(clock, latest._max.nextAttemptAt?.getTime() ?? null);
      // A Discard interrupted late in the chaos is finished by the cleanup sweep once its short claim
      // lapses (sandboxes/discard-intent.ts): wait for it, as for a scheduled retry.
      const [discarding] = await prisma.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM environment_leases
        WHERE company_id = ${COMPANY_ID}::uuid AND status <> 'destroyed'::lease_status AND metadata ? 'sandboxDiscard'`;
      if (busy === 0 && inFlight === 0 && (discarding?.n ?? 0) === 0) {
        quietPasses += 1;
        // A few passes of the reconciler with nothing to do, and the holds the harness can attest are gone.
        if (quietPasses >= 5 && open.every((a) => a.runId !== null && lost.some((l) => l.runId === a.runId))) return true;
        if (quietPasses >= 15) return true;
      } else quietPasses = 0;
    } catch {
      quietPasses = 0;
    }
  }
  return false;
}
