"use client";

import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useState } from "react";
import type { IssueStatusValue } from "~/server/routers/issues/issue-status";
import { RunMoment } from "~/components/runs/run-moment";
import { runPath } from "~/components/nav/paths";
import { useTaskRecovery, type TaskRecovery } from "~/components/issues/use-task-recovery";
import type { RouterOutputs } from "~/components/trpc-types";
import { domainCodeOf, userMessageOf } from "~/components/ui/error-message";
import { ISSUE_STATUS_LABEL } from "~/components/ui/issue-status-badge";
import { useTRPC } from "~/trpc/react";
import { HostWaitNote, hostWaitRereadMs } from "./host-wait-note";
import { RunControlButtons } from "./run-control-buttons";
import { runProgressOf } from "./run-progress";
import { decideWake } from "./wake-decision";

type LatestRun = RouterOutputs["runs"]["latestForIssue"];

/** How often a queued run's panel is re-read (well inside the 45 s bound of a worker's staleness). */

interface Props {
  companyId: string;
  issueId: string;
  issueStatus: IssueStatusValue;
  assignee: { id: string; name: string } | null;
  /** The company's agents that can be assigned (not archived). */
  agents: ReadonlyArray<{ id: string; name: string }>;
  /** issues:write: assign and wake. Without it the panel only shows. */
  canWrite: boolean;
  initial: LatestRun;
  /** The task's recovery (recovery.forIssue), or null when the page could not read it. */
  initialRecovery: TaskRecovery | null;
}

/**
 * The task's agent: who is assigned, "Wake agent", the current run's chip (Queued, Working,
 * Finished) and, once the agent's result is accepted, its outcome and summary. Live: the run
 * query is invalidated by heartbeat_runs changes (<LiveUpdates>), the task status by issues ones.
 */
export function AgentPanel({ companyId, issueId, issueStatus, assignee, agents, canWrite, initial, initialRecovery }: Props) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [notice, setNotice] = useState<string | null>(null);
  // A queued or running run is re-read now and then as well: a host's worker going away changes no
  // run row, so no live update would bring "Waiting for the worker on HOST" or "The worker on HOST
  // stopped during this run" (issue 23).
  const { data } = useQuery(
    trpc.runs.latestForIssue.queryOptions(
      { companyId, issueId },
      { initialData: initial, refetchInterval: (query) => hostWaitRereadMs(query.state.data?.run?.status) },
    ),
  );
  const recovery = useTaskRecovery(companyId, issueId, initialRecovery);

  const refreshRuns = async () => {
    await queryClient.invalidateQueries({ queryKey: trpc.runs.pathKey() });
    router.refresh();
  };
  const assign = useMutation(
    trpc.issues.assignAgent.mutationOptions({
      onSuccess: (result) => {
        setNotice(result.assignee ? `Assigned to ${result.assignee.name}.` : "Unassigned.");
        router.refresh();
      },
    }),
  );
  const wake = useMutation(
    trpc.issues.wake.mutationOptions({
      onSuccess: async (result) => {
        setNotice(result.created ? "Agent woken: the run is queued." : "A run of this task was already queued or working.");
        await refreshRuns();
      },
      // A hold opened since the page was read: show its notice (and the reason below) at once.
      onError: async (err) => {
        if (domainCodeOf(err) === "recovery_hold_open")
          await queryClient.invalidateQueries({ queryKey: trpc.recovery.pathKey() });
      },
    }),
  );

  const pendingAssignee = assign.isPending ? assign.variables.agentId : undefined;
  const selected = pendingAssignee !== undefined ? pendingAssignee : (assignee?.id ?? null);
  const decision = decideWake({
    issueStatus,
    agentId: selected,
    latestRunStatus: data.run?.status ?? null,
    recovery: recovery?.notice.kind ?? "none",
  });
  const busy = assign.isPending || wake.isPending;
  const error = assign.error ?? wake.error;

  return (
    <section aria-labelledby="agent-title" className="card space-y-4 p-5" data-testid="agent-panel">
      <h2 id="agent-title" className="text-sm font-semibold text-slate-900">
        Agent
      </h2>

      {canWrite ? (
        <div className="space-y-2">
          <label htmlFor="agent-assignee" className="block text-xs font-medium uppercase tracking-wide text-slate-500">
            Assigned agent
          </label>
          <select
            id="agent-assignee"
            className="field w-full"
            data-testid="agent-assignee-select"
            value={selected ?? ""}
            disabled={busy}
            onChange={(event) => {
              setNotice(null);
              assign.reset();
              wake.reset();
              assign.mutate({ companyId, issueId, agentId: event.target.value === "" ? null : event.target.value });
            }}
          >
            <option value="">Unassigned</option>
            {agents.map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
          </select>
          <button
            type="button"
            className="btn btn-primary w-full"
            disabled={busy || decision.kind === "disabled"}
            aria-describedby={decision.kind === "disabled" ? "wake-reason" : undefined}
            onClick={() => {
              setNotice(null);
              assign.reset();
              wake.mutate({ companyId, issueId });
            }}
          >
            {wake.isPending ? "Waking…" : "Wake agent"}
          </button>
          {decision.kind === "disabled" ? (
            <p id="wake-reason" className="text-xs text-slate-500" data-testid="wake-reason">
              {decision.reason}
            </p>
          ) : null}
          <p aria-live="polite" className={`text-xs ${error ? "text-red-700" : "text-slate-500"}`}>
            {error ? userMessageOf(error) : notice}
          </p>
        </div>
      ) : (
        <p className="text-sm text-slate-800">{assignee?.name ?? "No agent assigned."}</p>
      )}

      <CurrentRun companyId={companyId} latest={data} recovery={recovery?.notice.kind ?? "none"} canWrite={canWrite} />
    </section>
  );
}

function CurrentRun({ companyId, latest, recovery, canWrite }: { companyId: string; latest: LatestRun; recovery: "none" | "attention" | "restoring"; canWrite: boolean }) {
  const { run, result } = latest;
  if (!run) return <p className="text-sm text-slate-500">No run yet.</p>;
  const progress = runProgressOf(run.status, recovery);
  return (
    <div className="space-y-3 border-t border-slate-100 pt-4" data-testid="agent-current-run">
      <div className="flex items-center justify-between gap-3">
        <div className="flex min-w-0 items-center gap-2">
          <span
            data-testid="agent-run-chip"
            data-status={run.status}
            className={`inline-flex items-center whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${progress.tone}`}
          >
            {progress.settled ? null : <span aria-hidden="true" className="mr-1.5 size-1.5 animate-pulse rounded-full bg-current" />}
            {progress.label}
          </span>
          <span className="truncate text-sm text-slate-700">{run.agent.name}</span>
        </div>
        <Link href={runPath(companyId, run.id)} className="shrink-0 text-sm font-medium text-indigo-700 hover:underline" data-testid="agent-run-link">
          Inspect run
        </Link>
      </div>
      <p className="text-xs text-slate-500">
        <RunMoment run={run} />
      </p>
      <HostWaitNote waiting={run.waiting} />
      {/* Keyed by run: a new run starts with fresh Stop/Retry state. */}
      <RunControlButtons key={run.id} companyId={companyId} runId={run.id} runStatus={run.status} recovery={recovery} canWrite={canWrite} />
      {result ? (
        <div className="rounded-md bg-slate-50 p-3" data-testid="agent-result">
          <p className="text-xs font-medium uppercase tracking-wide text-slate-500">
            Result: <span data-testid="agent-result-outcome">{ISSUE_STATUS_LABEL[result.outcome]}</span>
          </p>
          <p className="mt-1 whitespace-pre-wrap break-words text-sm text-slate-800" data-testid="agent-result-summary">
            {result.summary}
          </p>
        </div>
      ) : run.errorCode && progress.settled ? (
        <p className="text-xs text-slate-600">
          Ended with <code className="font-mono">{run.errorCode}</code>.
        </p>
      ) : null}
    </div>
  );
}
