// Retry (R-RR-7): re-wakes the task's agent after its latest run failed, timed out or was
// stopped, as an ordinary wake (wake-agent.ts) that names the run it follows. It refuses while any
// recovery action of the task is open (recovery_hold_open, with the reason) and leaves that action
// exactly as it is: a Retry is never a way around a hold, and a failed run's kept sandbox is
// never replayed. Only the task's latest run can be retried (a newer run says the task moved on).
import type { PrismaClient } from "@copyback/db/client";
import { conflict, notFound } from "../errors";
import { readReconstructionAuthority, reconstructionAuthority } from "../records/reconstruction-authority";
import type { Actor } from "../records/record-activity";
import { wakeAgent } from "./wake-agent";

export const RETRYABLE_RUN_STATUSES = ["failed", "timed_out", "cancelled"] as const;

export interface RetryRunInput {
  companyId: string;
  runId: string;
  actor: Actor;
}

export async function retryRun(db: PrismaClient, input: RetryRunInput): Promise<{ runId: string; created: boolean; predecessorRunId: string }> {
  const run = await db.heartbeatRun.findFirst({
    where: { id: input.runId, companyId: input.companyId },
    select: { id: true, nativeIssueId: true, status: true, createdAt: true, runnerProfileJson: true },
  });
  if (!run) throw notFound("The run");
  // R-RC-5: a bounded retry of a reconstruction's run keeps the same reconstruction authority (it
  // names the intent; claim and handoff recheck the intent, the chain and the retry budget).
  const authority = readReconstructionAuthority(run.runnerProfileJson);
  const woken = await wakeAgent(db, {
    companyId: input.companyId,
    issueId: run.nativeIssueId,
    actor: input.actor,
    reason: "retry",
    predecessorRunId: run.id,
    ...(authority.kind === "present" ? { runnerProfile: reconstructionAuthority(authority.intentId) } : {}),
    // Under the task's row lock, after the hold check: the run must still be the task's latest.
    admit: async (tx) => {
      const current = await tx.heartbeatRun.findUniqueOrThrow({ where: { id: run.id }, select: { status: true } });
      if (!(RETRYABLE_RUN_STATUSES as readonly string[]).includes(current.status)) {
        throw conflict("run_not_retryable", `Only a failed, timed-out or stopped run can be retried; this one is ${current.status}.`, { runId: run.id, status: current.status });
      }
      const newer = await tx.heartbeatRun.findFirst({
        where: { nativeIssueId: run.nativeIssueId, id: { not: run.id }, createdAt: { gt: run.createdAt } },
        select: { id: true, status: true },
      });
      if (newer) throw conflict("run_superseded", "A newer run of this task exists; retry that one instead.", { runId: run.id, newerRunId: newer.id, newerStatus: newer.status });
    },
  });
  return { ...woken, predecessorRunId: run.id };
}
