// What a claimed run needs before anything is allocated: its agent (command, adapter settings,
// environment) and its issue's execution workspace. Loading is I/O; deciding whether the run can
// start is the pure `decideRunContext`, so every refusal has one stable code.
import type { PrismaClient } from "@copyback/db";
import { z } from "zod";
import { readReconstructionAuthority } from "../records/reconstruction-authority";
import { agentAdapterConfig, type AgentAdapterConfig } from "../records/adapter-config";

export interface RunContextSnapshot {
  run: { id: string; companyId: string; status: string; agentId: string; issueId: string; runtimeMode?: "native" | "legacy"; carriesReconstruction?: boolean } | null;
  agent: { id: string; command: string[]; adapterConfig: unknown; environmentId: string | null; archived: boolean } | null;
  environment: { id: string; pluginId: string; provider: string } | null;
  issue: { id: string; executionWorkspaceId: string | null } | null;
  workspace: { id: string; hostPath: string } | null;
}

export interface ReadyRunContext {
  runId: string;
  companyId: string;
  issueId: string;
  agentId: string;
  argv: string[];
  adapter: AgentAdapterConfig;
  environmentId: string;
  /** The environment's provider plugin (a new allocation's; a reused lease keeps its own pin, R-EX-6). */
  environmentPluginId: string;
  executionWorkspaceId: string;
  hostPath: string;
  /** `legacy`: the older copy-back protocol at the end of the turn (legacy-run.ts), no coordinator. */
  runtimeMode: "native" | "legacy";
  /** R-RC-5: the run carries a reconstruction's authority, rechecked before the provider handoff. */
  carriesReconstruction: boolean;
}

export type RunContextDecision =
  | { kind: "ready"; context: ReadyRunContext }
  /** The run is no longer this executor's to run (cancelled or settled since the claim). */
  | { kind: "not_running"; status: string }
  | { kind: "reject"; code: string; message: string };

export function decideRunContext(snapshot: RunContextSnapshot): RunContextDecision {
  const { run, agent, environment, issue, workspace } = snapshot;
  if (!run) return { kind: "reject", code: "run_not_found", message: "The run no longer exists." };
  if (run.status !== "running") return { kind: "not_running", status: run.status };
  if (!agent) return { kind: "reject", code: "agent_not_found", message: "The run's agent no longer exists." };
  if (agent.archived) return { kind: "reject", code: "agent_archived", message: "The run's agent is archived." };
  if (agent.command.length === 0 || agent.command[0] === "") {
    return { kind: "reject", code: "agent_without_command", message: "The agent has no command to run." };
  }
  if (!agent.environmentId || !environment) {
    return { kind: "reject", code: "agent_without_environment", message: "The agent has no environment to run in." };
  }
  if (!issue) return { kind: "reject", code: "issue_not_found", message: "The run's issue no longer exists." };
  if (!issue.executionWorkspaceId || !workspace) {
    return { kind: "reject", code: "issue_without_workspace", message: "The issue has no execution workspace." };
  }
  const adapter = agentAdapterConfig.safeParse(agent.adapterConfig);
  if (!adapter.success) {
    return { kind: "reject", code: "agent_adapter_config_invalid", message: `The agent's adapter settings are invalid: ${z.prettifyError(adapter.error)}` };
  }
  return {
    kind: "ready",
    context: {
      runId: run.id,
      companyId: run.companyId,
      issueId: run.issueId,
      agentId: agent.id,
      argv: agent.command,
      adapter: adapter.data,
      environmentId: environment.id,
      environmentPluginId: environment.pluginId,
      executionWorkspaceId: workspace.id,
      hostPath: workspace.hostPath,
      runtimeMode: run.runtimeMode ?? "native",
      carriesReconstruction: run.carriesReconstruction ?? false,
    },
  };
}

export async function loadRunContext(db: PrismaClient, runId: string): Promise<RunContextSnapshot> {
  const run = await db.heartbeatRun.findUnique({
    where: { id: runId },
    select: {
      id: true,
      companyId: true,
      status: true,
      agentId: true,
      nativeIssueId: true,
      runtimeMode: true,
      runnerProfileJson: true,
      agent: { select: { id: true, command: true, adapterConfig: true, environmentId: true, archivedAt: true, environment: { select: { id: true, pluginId: true, provider: true } } } },
      nativeIssue: { select: { id: true, executionWorkspaceId: true, executionWorkspace: { select: { id: true, hostPath: true } } } },
    },
  });
  if (!run) return { run: null, agent: null, environment: null, issue: null, workspace: null };
  const { agent, nativeIssue: issue } = run;
  return {
    run: {
      id: run.id,
      companyId: run.companyId,
      status: run.status,
      agentId: run.agentId,
      issueId: run.nativeIssueId,
      runtimeMode: run.runtimeMode,
      carriesReconstruction: readReconstructionAuthority(run.runnerProfileJson).kind !== "none",
    },
    agent: { id: agent.id, command: agent.command, adapterConfig: agent.adapterConfig, environmentId: agent.environmentId, archived: agent.archivedAt !== null },
    environment: agent.environment,
    issue: { id: issue.id, executionWorkspaceId: issue.executionWorkspaceId },
    workspace: issue.executionWorkspace,
  };
}
