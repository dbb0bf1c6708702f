// The quiet period's wait: until the system settled, or the deadline (settle-deadline.ts) passed.
// When it did not settle, what was still moving at the last look is returned with the verdict: a
// CI run of seed 2065184287 reported "did not settle" with 0 violations and nothing else, and the
// machine that ran it was gone (its kept work directory with it), so the cause could not be read.
import type { PrismaClient } from "@copyback/db";
import { sleep } from "./loops/harness";
import { nextSettleDeadline, settleDeadline } from "./settle-deadline";
import { COMPANY_ID } from "./world";

export interface SettleOutcome {
  settled: boolean;
  /** What kept the last look from being quiet (empty when settled). */
  unsettled: string[];
}

/** Settled: no run queued or running without a hold, no coordinator in flight without a hold, no hold waiting for an attestation the harness can give. */
export async function waitSettled(prisma: PrismaClient, timeoutMs: number): Promise<SettleOutcome> {
  const clock = { startedAt: Date.now(), baseMs: timeoutMs };
  let deadline = settleDeadline(clock, null);
  let quietPasses = 0;
  let unsettled: string[] = ["no look completed"];
  while (Date.now() < deadline) {
    await sleep(1_000);
    try {
      const open = await prisma.issueRecoveryAction.findMany({ where: { companyId: COMPANY_ID, status: { in: ["active", "escalated"] } }, select: { id: true, runId: true, cause: true } });
      // Fake runs whose sandbox died with its worker retry until the export retry budget is spent (relaxed in the checker).
      const lost = await prisma.nativeRunFinalization.findMany({ where: { companyId: COMPANY_ID, failureCode: "provider_sandbox_missing", phase: "retryable_failure" }, select: { runId: true } });
      const held = [...open.map((a) => a.runId).filter((r): r is string => r !== null), ...lost.map((l) => l.runId)];
      const busy = await prisma.heartbeatRun.findMany({
        where: { companyId: COMPANY_ID, status: { in: ["queued", "running"] }, id: { notIn: held } },
        select: { id: true, status: true },
      });
      const inFlight = await prisma.nativeRunFinalization.findMany({
        where: { companyId: COMPANY_ID, phase: { in: ["result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"] }, runId: { notIn: held } },
        select: { runId: true, phase: true, nextAttemptAt: true, failureCode: true },
      });
      // The product's retry schedule decides how long a run may rightly take (settle-deadline.ts).
      const retries = inFlight.filter((c) => c.phase === "retryable_failure" && c.nextAttemptAt !== null).map((c) => c.nextAttemptAt!.getTime());
      deadline = nextSettleDeadline(clock, deadline, retries.length > 0 ? Math.max(...retries) : null);
      // A Discard interrupted late in the chaos is finished by the cleanup sweep once its short claim
      // lapses (sandboxes/discard-intent.ts): wait for it, as for a scheduled retry.
      const discarding = await prisma.$queryRaw<{ id: string; run_id: string | null; status: string }[]>`
        SELECT id::text, run_id::text, status::text FROM environment_leases
        WHERE company_id = ${COMPANY_ID}::uuid AND status <> 'destroyed'::lease_status AND metadata ? 'sandboxDiscard'`;
      // The harness's attester resolves the holds it can; any other open hold needs the longer count.
      const onlyLostHolds = open.every((a) => a.runId !== null && lost.some((l) => l.runId === a.runId));
      unsettled = [
        ...busy.map((r) => `run ${r.id} ${r.status} without a hold`),
        ...inFlight.map((c) => `run ${c.runId} coordinator ${c.phase}${c.failureCode ? ` (${c.failureCode})` : ""}${c.nextAttemptAt ? `, next attempt ${c.nextAttemptAt.toISOString()}` : ""}`),
        ...discarding.map((l) => `lease ${l.id} of run ${l.run_id ?? "none"} ${l.status} with a Discard unfinished`),
      ];
      if (unsettled.length === 0) {
        quietPasses += 1;
        // A few passes of the reconciler with nothing to do, and the holds the harness can attest are gone.
        if (quietPasses >= 5 && onlyLostHolds) return { settled: true, unsettled: [] };
        if (quietPasses >= 15) return { settled: true, unsettled: [] };
        unsettled = [`${quietPasses} quiet look(s) of ${onlyLostHolds ? 5 : 15}; open holds: ${open.map((a) => `${a.cause} on run ${a.runId ?? "none"}`).join(", ") || "none"}`];
      } else quietPasses = 0;
    } catch (error) {
      quietPasses = 0;
      unsettled = [`the last look failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`];
    }
  }
  return { settled: false, unsettled };
}
