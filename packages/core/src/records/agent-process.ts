// R-OWN-12 data: the agent's process as the provider reported it (PID with its /proc start time,
// boot id and host), recorded on the run as runner_profile_json.agentProcess so the next issue's
// reconciler can judge whether that process is still alive without trusting a PID alone. Merged
// into the shared JSON column (records/run-json.ts), so the finalization owner receipt and the claim
// record beside it are never overwritten.
import { Prisma, type PrismaClient } from "@copyback/db/client";
import type { ProcessIdentity } from "../process/process-identity";
import { parseProcessIdentity } from "./process-identity-record";
import { mergedJsonObject } from "./run-json";

export const AGENT_PROCESS_KEY = "agentProcess";

export async function recordAgentProcess(db: PrismaClient, runId: string, process: ProcessIdentity): Promise<void> {
  const value = JSON.stringify({ ...process, recordedAt: new Date().toISOString() });
  await db.$executeRaw`
    UPDATE heartbeat_runs
       SET runner_profile_json = ${mergedJsonObject("runner_profile_json", Prisma.sql`jsonb_build_object(${AGENT_PROCESS_KEY}::text, ${value}::jsonb)`)},
           updated_at = now()
     WHERE id = ${runId}::uuid`;
}

/** Whether the run has an agent-process record at all (well-formed or not): its agent was started. */
export function hasAgentProcessRecord(runnerProfileJson: unknown): boolean {
  return typeof runnerProfileJson === "object" && runnerProfileJson !== null && AGENT_PROCESS_KEY in runnerProfileJson;
}

/** The agent's process as the run recorded it (runner_profile_json.agentProcess), or null. */
export function readAgentProcess(runnerProfileJson: unknown): ProcessIdentity | null {
  if (typeof runnerProfileJson !== "object" || runnerProfileJson === null || Array.isArray(runnerProfileJson)) return null;
  return parseProcessIdentity((runnerProfileJson as Record<string, unknown>)[AGENT_PROCESS_KEY]);
}
