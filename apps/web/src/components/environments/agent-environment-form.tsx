"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";

interface Props {
  companyId: string;
  agents: ReadonlyArray<{ id: string; name: string; environmentId: string | null }>;
  environments: ReadonlyArray<{ id: string; name: string; provider: string }>;
}

/**
 * Which environment an agent's runs are dispatched in: the same core service as `copyback agent
 * set-environment`. Runs dispatched afterwards use it; a run already holding a sandbox keeps it.
 */
export function AgentEnvironmentForm({ companyId, agents, environments }: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const [agentId, setAgentId] = useState(agents[0]?.id ?? "");
  const current = agents.find((a) => a.id === agentId)?.environmentId ?? null;
  const [environmentId, setEnvironmentId] = useState(environments[0]?.id ?? "");
  const choose = useMutation(trpc.agents.setEnvironment.mutationOptions({ onSuccess: () => router.refresh() }));
  const nameOf = (id: string | null) => (id === null ? "none" : (environments.find((e) => e.id === id)?.name ?? "another environment"));

  if (agents.length === 0) return <p className="text-xs text-slate-500">This company has no agent to point at an environment.</p>;
  if (environments.length === 0) return <p className="text-xs text-slate-500">Create an environment first; then choose which agents run in it.</p>;
  return (
    <form
      className="card space-y-3 p-4 text-sm"
      data-testid="agent-environment-form"
      onSubmit={(event) => {
        event.preventDefault();
        choose.mutate({ companyId, agentId, environmentId });
      }}
    >
      <h2 className="font-medium text-slate-900">An agent&apos;s environment</h2>
      <div className="grid gap-3 sm:grid-cols-2">
        <label className="block text-xs text-slate-700">
          Agent
          <select className="field mt-1 w-full" value={agentId} onChange={(e) => { setAgentId(e.target.value); choose.reset(); }} data-testid="agent-environment-agent">
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} (now: {nameOf(a.environmentId)})
              </option>
            ))}
          </select>
        </label>
        <label className="block text-xs text-slate-700">
          Runs in
          <select className="field mt-1 w-full" value={environmentId} onChange={(e) => { setEnvironmentId(e.target.value); choose.reset(); }} data-testid="agent-environment-environment">
            {environments.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name} ({e.provider})
              </option>
            ))}
          </select>
        </label>
      </div>
      <p className="text-xs text-slate-500">
        {current === null ? "This agent has no environment: its runs cannot start until it has one." : `This agent runs in ${nameOf(current)} now.`} Runs dispatched after the change use the new environment; a run already holding a sandbox keeps it.
      </p>
      <button type="submit" className="btn btn-primary text-xs disabled:opacity-50" disabled={choose.isPending || current === environmentId} data-testid="agent-environment-submit">
        {choose.isPending ? "Saving…" : "Use this environment"}
      </button>
      {choose.data ? (
        <p className="text-xs text-emerald-800" role="status" data-testid="agent-environment-done">
          {choose.data.changed ? `${choose.data.agent.name} now runs in ${choose.data.environment.name}.` : `${choose.data.agent.name} already ran in ${choose.data.environment.name}: nothing changed.`}
        </p>
      ) : null}
      {choose.error ? (
        <p role="alert" className="rounded-md border border-amber-200 bg-amber-50 px-3 py-2 text-xs text-amber-900" data-testid="agent-environment-error">
          Nothing changed. {userMessageOf(choose.error)}
        </p>
      ) : null}
    </form>
  );
}
