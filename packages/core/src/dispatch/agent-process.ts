// R-OWN-12 data: the agent's process as the provider reported it (PID with its /proc start time,
// boot id and host), recorded on the run so the next issue's reconciler can judge whether that
// process is still alive without trusting a PID alone. A jsonb merge, so a concurrent writer of
// another key (the finalization owner receipt) is never overwritten.
import type { PrismaClient } from "@copyback/db";
import type { ProcessIdentity } from "../process/process-identity";

export async function recordAgentProcess(db: PrismaClient, runId: string, process: ProcessIdentity): Promise<void> {
  const value = JSON.stringify({ ...process, recordedAt: new Date().toISOString() });
  await db.$executeRaw`
    UPDATE heartbeat_runs
       SET runner_profile_json = coalesce(runner_profile_json, '{}'::jsonb) || jsonb_build_object('agentProcess', ${value}::jsonb),
           updated_at = now()
     WHERE id = ${runId}::uuid`;
}
