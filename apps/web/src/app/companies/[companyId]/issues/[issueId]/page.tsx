import type { Metadata } from "next";
import Link from "next/link";
import { cache } from "react";
import { AgentPanel } from "~/components/agent/agent-panel";
import { IssueAttachments } from "~/components/issues/attachments";
import { Conversation } from "~/components/issues/conversation";
import { IssueNotices } from "~/components/issues/issue-notices";
import { IssueRuns } from "~/components/issues/issue-runs";
import { MessageComposer } from "~/components/issues/message-composer";
import { StatusControl } from "~/components/issues/status-control";
import { Timestamp } from "~/components/format/timestamp";
import { issuesPath } from "~/components/nav/paths";
import { AccessDenied } from "~/components/ui/access-denied";
import { IssueStatusBadge } from "~/components/ui/issue-status-badge";
import { serverCaller } from "~/trpc/server";
import { companyPermissions } from "../../../../_lib/company";
import { pageCall } from "../../../../_lib/page-call";

type Params = Promise<{ companyId: string; issueId: string }>;

// One issues.get per request, shared by the metadata and the page.
const loadIssue = cache(async (companyId: string, issueId: string) =>
  (await serverCaller()).issues.get({ companyId, issueId }),
);

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  const { companyId, issueId } = await params;
  const issue = await loadIssue(companyId, issueId).catch(() => null);
  return { title: issue ? `${issue.identifier} ${issue.title}` : "Issue" };
}

/** The task view: header, notices, description, conversation, its agent and runs, and (for writers) controls. */
export default async function IssuePage({ params }: { params: Params }) {
  const { companyId, issueId } = await params;
  const caller = await serverCaller();
  const input = { companyId, issueId };
  const [issue, messages, attachments, runs, latestRun, agents, recovery, can] = await Promise.all([
    pageCall(() => loadIssue(companyId, issueId)),
    pageCall(() => caller.issues.messages(input)),
    pageCall(() => caller.issues.attachments(input)),
    pageCall(() => caller.runs.listForIssue(input)),
    pageCall(() => caller.runs.latestForIssue(input)),
    pageCall(() => caller.agents.list({ companyId })),
    pageCall(() => caller.recovery.forIssue(input)),
    companyPermissions(companyId),
  ]);
  if (!issue.ok) return <AccessDenied title="Issue" message={issue.message} />;
  const canWrite = can.has("issues:write");

  return (
    <article className="space-y-6" aria-labelledby="issue-title">
      <nav aria-label="Breadcrumb" className="text-sm text-slate-500">
        <ol className="flex items-center gap-1.5">
          <li>
            <Link href={issuesPath(companyId)} className="hover:text-slate-800 hover:underline">
              Issues
            </Link>
          </li>
          <li aria-hidden="true">/</li>
          <li aria-current="page" className="font-mono text-xs">
            {issue.data.identifier}
          </li>
        </ol>
      </nav>

      <header className="space-y-2" data-testid="issue-header">
        <div className="flex flex-wrap items-center gap-3">
          <span className="font-mono text-sm text-slate-500">{issue.data.identifier}</span>
          <IssueStatusBadge status={issue.data.status} />
        </div>
        <h1 id="issue-title" className="text-2xl font-semibold tracking-tight text-slate-900">
          {issue.data.title}
        </h1>
      </header>

      <IssueNotices
        companyId={companyId}
        issueId={issueId}
        initial={recovery.ok ? recovery.data : null}
      />

      <div className="grid gap-6 lg:grid-cols-[minmax(0,1fr)_18rem]">
        <div className="space-y-6">
          <section aria-labelledby="description-title" className="card p-5">
            <h2 id="description-title" className="text-sm font-semibold text-slate-900">
              Description
            </h2>
            {issue.data.description ? (
              <p className="mt-2 whitespace-pre-wrap break-words text-sm text-slate-700">
                {issue.data.description}
              </p>
            ) : (
              <p className="mt-2 text-sm text-slate-500">No description.</p>
            )}
          </section>

          <section aria-labelledby="attachments-title" className="card space-y-3 p-5">
            <h2 id="attachments-title" className="text-sm font-semibold text-slate-900">
              Attachments
            </h2>
            {attachments.ok ? (
              <IssueAttachments
                companyId={companyId}
                issueId={issueId}
                initial={attachments.data}
                canWrite={canWrite}
              />
            ) : (
              <p className="text-sm text-slate-500">{attachments.message}</p>
            )}
          </section>

          <section aria-labelledby="conversation-title" className="card space-y-5 p-5">
            <h2 id="conversation-title" className="text-sm font-semibold text-slate-900">
              Conversation
            </h2>
            {messages.ok ? (
              <Conversation companyId={companyId} issueId={issueId} initial={messages.data} />
            ) : (
              <p className="text-sm text-slate-500">{messages.message}</p>
            )}
            {canWrite ? (
              <div className="border-t border-slate-100 pt-4">
                <MessageComposer companyId={companyId} issueId={issueId} />
              </div>
            ) : null}
          </section>
        </div>

        <aside className="space-y-6">
          <section aria-label="Details" className="card space-y-4 p-5">
            {canWrite ? (
              <StatusControl
                key={issue.data.statusVersion}
                companyId={companyId}
                issueId={issueId}
                status={issue.data.status}
                statusVersion={issue.data.statusVersion}
              />
            ) : null}
            <dl className="space-y-3 text-sm">
              <div>
                <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">
                  Assignee
                </dt>
                <dd className="mt-0.5 text-slate-800" data-testid="issue-assignee">
                  {issue.data.assignee?.name ?? "Unassigned"}
                </dd>
              </div>
              {issue.data.createdBy ? (
                <div>
                  <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">
                    Created by
                  </dt>
                  <dd className="mt-0.5 text-slate-800">{issue.data.createdBy.name}</dd>
                </div>
              ) : null}
              <div>
                <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">
                  Created
                </dt>
                <dd className="mt-0.5 text-slate-800">
                  <Timestamp date={issue.data.createdAt} />
                </dd>
              </div>
              <div>
                <dt className="text-xs font-medium uppercase tracking-wide text-slate-500">
                  Last activity
                </dt>
                <dd className="mt-0.5 text-slate-800">
                  <Timestamp date={issue.data.lastActivityAt} />
                </dd>
              </div>
            </dl>
          </section>

          {latestRun.ok ? (
            <AgentPanel
              companyId={companyId}
              issueId={issueId}
              issueStatus={issue.data.status}
              assignee={issue.data.assignee}
              agents={agents.ok ? agents.data.filter((agent) => !agent.archived) : []}
              canWrite={canWrite}
              initial={latestRun.data}
              initialRecovery={recovery.ok ? recovery.data : null}
            />
          ) : null}

          {runs.ok ? (
            <section aria-labelledby="runs-title" className="card p-5">
              <h2 id="runs-title" className="text-sm font-semibold text-slate-900">
                Runs
              </h2>
              <div className="mt-2">
                <IssueRuns companyId={companyId} issueId={issueId} initial={runs.data} />
              </div>
            </section>
          ) : null}
        </aside>
      </div>
    </article>
  );
}
