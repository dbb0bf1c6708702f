// Whether an agent may be pointed at an environment (issue 21 part 5: `copyback agent
// set-environment` and the console's chooser). Pure, over what the service read under the agent's
// row lock. A run takes its agent's environment when it is dispatched (dispatch/run-context.ts),
// so the change applies to runs dispatched after it; a run already holding a lease keeps it.

export interface AgentEnvironmentSnapshot {
  /** The company the caller acts for (the console's); null for the instance operator's CLI. */
  scopeCompanyId: string | null;
  agent: { id: string; companyId: string; name: string; environmentId: string | null; archived: boolean } | null;
  environment: { id: string; companyId: string; name: string; provider: string } | null;
}

export type AgentEnvironmentDecision =
  | { kind: "change"; from: string | null; to: string }
  | { kind: "unchanged" }
  | { kind: "reject"; errorKind: "not_found" | "conflict" | "invalid"; code: string; message: string };

export function decideAgentEnvironment(snapshot: AgentEnvironmentSnapshot, environmentId: string, agentId: string): AgentEnvironmentDecision {
  const { scopeCompanyId, agent, environment } = snapshot;
  // Another company's agent or environment is not found, as any other company-scoped read says.
  if (!agent || (scopeCompanyId !== null && agent.companyId !== scopeCompanyId)) {
    return { kind: "reject", errorKind: "not_found", code: "agent_not_found", message: `The agent ${agentId} was not found; nothing changed.` };
  }
  if (!environment || (scopeCompanyId !== null && environment.companyId !== scopeCompanyId)) {
    return { kind: "reject", errorKind: "not_found", code: "environment_not_found", message: `The environment ${environmentId} was not found; nothing changed.` };
  }
  if (environment.companyId !== agent.companyId) {
    return {
      kind: "reject",
      errorKind: "invalid",
      code: "environment_of_another_company",
      message: `The environment ${environment.name} belongs to another company than the agent ${agent.name}; nothing changed.`,
    };
  }
  if (agent.archived) return { kind: "reject", errorKind: "conflict", code: "agent_archived", message: `The agent ${agent.name} is archived; nothing changed.` };
  if (agent.environmentId === environment.id) return { kind: "unchanged" };
  return { kind: "change", from: agent.environmentId, to: environment.id };
}
