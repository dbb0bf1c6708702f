"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { RunMoment } from "~/components/runs/run-moment";
import { runPath } from "~/components/nav/paths";
import type { RouterOutputs } from "~/components/trpc-types";
import { RunStatusBadge } from "~/components/ui/run-status-badge";
import { useTRPC } from "~/trpc/react";

type Runs = RouterOutputs["runs"]["listForIssue"];

/** The runs of this task, newest first, each with an "Inspect run" link. */
export function IssueRuns({
  companyId,
  issueId,
  initial,
}: {
  companyId: string;
  issueId: string;
  initial: Runs;
}) {
  const trpc = useTRPC();
  const { data } = useQuery(
    trpc.runs.listForIssue.queryOptions({ companyId, issueId }, { initialData: initial }),
  );

  if (data.runs.length === 0) return <p className="text-sm text-slate-500">No runs yet.</p>;
  return (
    <ul className="divide-y divide-slate-100" data-testid="issue-runs">
      {data.runs.map((run) => (
        <li
          key={run.id}
          className="flex items-center justify-between gap-3 py-2.5"
          data-testid="run-row"
        >
          <div className="min-w-0 space-y-0.5">
            <div className="flex items-center gap-2">
              <RunStatusBadge status={run.status} />
              <span className="truncate text-sm text-slate-700">{run.agent.name}</span>
            </div>
            <p className="text-xs text-slate-500">
              <RunMoment run={run} />
            </p>
          </div>
          <Link
            href={runPath(companyId, run.id)}
            className="shrink-0 text-sm font-medium text-indigo-700 hover:underline"
          >
            Inspect run
            <span className="sr-only">
              {" "}
              by {run.agent.name}, {run.status.replace("_", " ")}
            </span>
          </Link>
        </li>
      ))}
    </ul>
  );
}
