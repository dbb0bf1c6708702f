// Pointing an agent at an environment: the one service behind `copyback agent set-environment`
// and the console's chooser. Under the agent's row lock it reads the agent and the environment,
// asks the pure policy (agent-environment-policy.ts), and writes the change with its activity row
// (`agent.environment_changed`) in one transaction; a refusal or a no-op writes nothing.
import { Prisma, withTransaction, type PrismaClient } from "@copyback/db/client";
import { DomainError } from "../errors";
import { recordActivity, type Actor } from "../records/record-activity";
import { decideAgentEnvironment, type AgentEnvironmentSnapshot } from "./agent-environment-policy";

export interface SetAgentEnvironmentInput {
  agentId: string;
  environmentId: string;
  /** The company the caller acts for; null: any (the instance operator's CLI). */
  companyId: string | null;
  actor: Actor;
}

export interface SetAgentEnvironmentResult {
  agent: { id: string; companyId: string; name: string };
  environment: { id: string; name: string; provider: string };
  /** The environment the agent had before (null: none). */
  previousEnvironmentId: string | null;
  changed: boolean;
}

export async function setAgentEnvironment(db: PrismaClient, input: SetAgentEnvironmentInput): Promise<SetAgentEnvironmentResult> {
  return withTransaction(db, async (tx) => {
    // The lock orders two choosers of one agent; the second reads what the first wrote.
    await tx.$queryRaw(Prisma.sql`SELECT id FROM agents WHERE id = ${input.agentId}::uuid FOR UPDATE`);
    const agent = await tx.agent.findUnique({ where: { id: input.agentId }, select: { id: true, companyId: true, name: true, environmentId: true, archivedAt: true } });
    const environment = await tx.environment.findUnique({ where: { id: input.environmentId }, select: { id: true, companyId: true, name: true, provider: true } });
    const snapshot: AgentEnvironmentSnapshot = {
      scopeCompanyId: input.companyId,
      agent: agent && { id: agent.id, companyId: agent.companyId, name: agent.name, environmentId: agent.environmentId, archived: agent.archivedAt !== null },
      environment,
    };
    const decision = decideAgentEnvironment(snapshot, input.environmentId, input.agentId);
    if (decision.kind === "reject") throw new DomainError(decision.errorKind, decision.code, decision.message);
    // Both exist past a non-reject decision.
    const a = snapshot.agent!;
    const e = snapshot.environment!;
    const result = { agent: { id: a.id, companyId: a.companyId, name: a.name }, environment: { id: e.id, name: e.name, provider: e.provider }, previousEnvironmentId: a.environmentId };
    if (decision.kind === "unchanged") return { ...result, changed: false };
    await tx.agent.update({ where: { id: a.id }, data: { environmentId: decision.to } });
    await recordActivity(tx, {
      companyId: a.companyId,
      actor: input.actor,
      action: "agent.environment_changed",
      entityType: "agent",
      entityId: a.id,
      details: { from: decision.from, to: decision.to, environmentName: e.name, provider: e.provider },
    });
    return { ...result, changed: true };
  });
}
