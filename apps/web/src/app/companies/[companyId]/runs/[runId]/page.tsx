import type { Metadata } from "next";
import Link from "next/link";
import { AgentOutputView } from "~/components/runs/agent-output-view";
import { FinalizationDetails } from "~/components/runs/finalization-details";
import { IsolationNote } from "~/components/runs/isolation-note";
import { RunTimelineView } from "~/components/runs/run-timeline-view";
import { WorkspaceFiles } from "~/components/runs/workspace-files";
import { Timestamp } from "~/components/format/timestamp";
import { formatDuration, formatExact } from "~/components/format/time";
import { issuePath, issuesPath, runPath } from "~/components/nav/paths";
import { AccessDenied } from "~/components/ui/access-denied";
import { RunStatusBadge } from "~/components/ui/run-status-badge";
import { serverCaller } from "~/trpc/server";
import { companyPermissions } from "../../../../_lib/company";
import { pageCall } from "../../../../_lib/page-call";

export const metadata: Metadata = { title: "Run" };

const LEVEL_TONE = {
  debug: "text-slate-400",
  info: "text-sky-700",
  warn: "text-amber-700",
  error: "text-red-700",
} as const;

/**
 * Run inspection ("Inspect run" links land here): summary, phases, the workspace's files and what
 * this run changed, the agent's own output (stdout and stderr) and the controller's run log, all live through <LiveUpdates> (heartbeat_runs and
 * run_events changes refresh this server-rendered page). Finalization details (coordinator,
 * operations, lease) are operator diagnostics: runtime:manage only (R-UI-2).
 */
export default async function RunPage({
  params,
}: {
  params: Promise<{ companyId: string; runId: string }>;
}) {
  const { companyId, runId } = await params;
  const caller = await serverCaller();
  const can = await companyPermissions(companyId);
  const operator = can.has("runtime:manage");
  const [run, workspace, agentOutput, finalization] = await Promise.all([
    pageCall(() => caller.runs.get({ companyId, runId })),
    pageCall(() => caller.runs.workspace({ companyId, runId })),
    pageCall(() => caller.runs.agentOutput({ companyId, runId })),
    operator
      ? pageCall(() => caller.runs.finalization({ companyId, runId }))
      : Promise.resolve(null),
  ]);
  if (!run.ok) return <AccessDenied title="Run" message={run.message} />;
  const r = run.data;

  return (
    <article className="space-y-6" aria-labelledby="run-title">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-500">
        <ol className="flex items-center gap-1.5">
          <li>
            <Link href={issuesPath(companyId)} className="hover:text-slate-800 hover:underline">
              Issues
            </Link>
          </li>
          <li aria-hidden="true">/</li>
          <li>
            <Link
              href={issuePath(companyId, r.issue.id)}
              className="font-mono text-xs hover:text-slate-800 hover:underline"
            >
              {r.issue.identifier}
            </Link>
          </li>
          <li aria-hidden="true">/</li>
          <li aria-current="page">Run</li>
        </ol>
      </nav>

      <header>
        <div>
          <h1 id="run-title" className="text-2xl font-semibold tracking-tight text-slate-900">
            Run by {r.agent.name}
          </h1>
          <p className="mt-1 text-sm text-slate-600">
            On{" "}
            <Link
              href={issuePath(companyId, r.issue.id)}
              className="font-medium text-indigo-700 hover:underline"
              data-testid="run-issue-link"
            >
              {r.issue.identifier} {r.issue.title}
            </Link>
          </p>
        </div>
      </header>

      <section aria-labelledby="run-summary-title" className="card p-5">
        <h2 id="run-summary-title" className="sr-only">
          Summary
        </h2>
        <dl className="grid gap-x-6 gap-y-4 text-sm sm:grid-cols-2 lg:grid-cols-4">
          <Field label="Status">
            <RunStatusBadge status={r.status} />
          </Field>
          <Field label="Runtime mode">
            <span data-testid="runtime-mode" className="capitalize">
              {r.runtimeMode}
            </span>
          </Field>
          <Field label="Native phase">
            {r.nativePhase ? <code className="font-mono text-xs">{r.nativePhase}</code> : "—"}
          </Field>
          <Field label="Agent">{r.agent.name}</Field>
          <Field label="Queued">
            <Timestamp date={r.createdAt} />
          </Field>
          <Field label="Started">
            {r.startedAt ? <Timestamp date={r.startedAt} /> : "Not started"}
          </Field>
          <Field label="Finished">
            {r.finishedAt ? <Timestamp date={r.finishedAt} /> : "Not finished"}
          </Field>
          <Field label="Duration">
            {r.startedAt && r.finishedAt
              ? formatDuration(r.finishedAt.getTime() - r.startedAt.getTime())
              : "—"}
          </Field>
          {r.wakeReason ? <Field label="Woken by">{r.wakeReason}</Field> : null}
          {r.errorCode ? (
            <Field label="Error code">
              <code className="font-mono text-xs">{r.errorCode}</code>
            </Field>
          ) : null}
          {r.predecessorRunId ? (
            <Field label="Previous run">
              <Link
                href={runPath(companyId, r.predecessorRunId)}
                className="text-indigo-700 hover:underline"
              >
                Inspect previous run
              </Link>
            </Field>
          ) : null}
        </dl>
      </section>

      <div className="grid gap-6 lg:grid-cols-[16rem_minmax(0,1fr)]">
        <section aria-labelledby="run-phases-title" className="card p-5">
          <h2 id="run-phases-title" className="text-sm font-semibold text-slate-900">
            Phases
          </h2>
          <div className="mt-3">
            <RunTimelineView run={r} />
          </div>
        </section>

        <section aria-labelledby="run-workspace-title" className="card space-y-3 p-5" data-testid="run-workspace">
          <h2 id="run-workspace-title" className="text-sm font-semibold text-slate-900">
            Workspace
          </h2>
          {workspace.ok ? (
            <>
              <IsolationNote isolated={workspace.data.isolated} reason={workspace.data.isolationReason} />
              <WorkspaceFiles data={workspace.data} history={{ companyId, runId }} />
            </>
          ) : (
            <p className="text-sm text-slate-500">{workspace.message}</p>
          )}
        </section>
      </div>

      <section aria-labelledby="agent-output-title" className="card p-5" data-testid="agent-output-section">
        <h2 id="agent-output-title" className="text-sm font-semibold text-slate-900">
          Agent output
        </h2>
        {agentOutput.ok ? (
          <AgentOutputView
            data={agentOutput.data}
            downloadHref={`/api/runs/${runId}/agent-output`}
            running={r.status === "queued" || r.status === "running"}
          />
        ) : (
          <p className="mt-2 text-sm text-slate-500">{agentOutput.message}</p>
        )}
      </section>

      <section aria-labelledby="run-log-title" className="card p-5">
        <h2 id="run-log-title" className="text-sm font-semibold text-slate-900">
          Run log
        </h2>
        {r.events.length === 0 ? (
          <p className="mt-2 text-sm text-slate-500">Nothing logged for this run.</p>
        ) : (
          <>
            {r.eventsTruncated ? (
              <p className="mt-1 text-xs text-slate-500">
                Showing the latest {r.events.length} entries.
              </p>
            ) : null}
            <ol className="mt-3 space-y-1.5 font-mono text-xs" data-testid="run-events">
              {r.events.map((event) => (
                <li key={event.id} className="flex gap-3" data-testid="run-event">
                  <time
                    dateTime={event.createdAt.toISOString()}
                    className="shrink-0 text-slate-400"
                    title={formatExact(event.createdAt)}
                  >
                    {event.createdAt.toISOString().slice(11, 19)}
                  </time>
                  <span className={`w-10 shrink-0 uppercase ${LEVEL_TONE[event.level]}`}>
                    {event.level}
                  </span>
                  <span className="min-w-0 break-words text-slate-800">
                    <span className="text-slate-500">{event.code}</span> {event.message}
                  </span>
                </li>
              ))}
            </ol>
          </>
        )}
      </section>

      {finalization ? (
        <section
          aria-labelledby="finalization-title"
          className="card p-5"
          data-testid="finalization-details"
        >
          <h2 id="finalization-title" className="text-sm font-semibold text-slate-900">
            Finalization details
          </h2>
          <p className="mt-1 text-xs text-slate-500">Visible to runtime operators only.</p>
          <div className="mt-4">
            {finalization.ok ? (
              <FinalizationDetails data={finalization.data} />
            ) : (
              <p className="text-sm text-slate-500">{finalization.message}</p>
            )}
          </div>
        </section>
      ) : null}
    </article>
  );
}

function Field({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">{label}</dt>
      <dd className="mt-1 text-slate-800">{children}</dd>
    </div>
  );
}
