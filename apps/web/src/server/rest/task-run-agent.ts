// Which agents may read a task's attachments without a board permission: the run-scoped key of a
// run of that very task (R-RC-5: the reconstruction's fresh session fetches the attachments it
// must verify with the key in its environment, runs/run-agent-key.ts). The key principal is only
// issued while its run is running (server/auth/key-principal.ts). A standing agent key, another
// run of the agent or a run of another task is not the task's run: not found.
import type { PrismaClient } from "@copyback/db/client";
import type { Principal } from "@copyback/core/auth";

export async function isTaskRunAgent(db: PrismaClient, agent: Extract<Principal, { kind: "agent" }>, issue: { id: string; companyId: string }): Promise<boolean> {
  if (agent.runId === undefined) return false;
  const run = await db.heartbeatRun.findFirst({ where: { id: agent.runId, companyId: issue.companyId, agentId: agent.agentId, nativeIssueId: issue.id }, select: { id: true } });
  return run !== null;
}
