import type { Metadata } from "next";
import Link from "next/link";
import {
  boardSearchParams,
  parseBoardFilters,
  type SearchParams,
} from "~/components/issues/board-filters";
import { IssueFilters } from "~/components/issues/issue-filters";
import { RecoveryChip } from "~/components/issues/recovery-chip";
import { Timestamp } from "~/components/format/timestamp";
import { issuePath, issuesPath } from "~/components/nav/paths";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { IssueStatusBadge } from "~/components/ui/issue-status-badge";
import { serverCaller } from "~/trpc/server";
import { pageCall } from "../../../_lib/page-call";

export const metadata: Metadata = { title: "Issues" };

const PAGE_SIZE = 50;

/** The issues board: server-filtered, keyset-paginated, newest activity first. */
export default async function IssuesPage({
  params,
  searchParams,
}: {
  params: Promise<{ companyId: string }>;
  searchParams: Promise<SearchParams>;
}) {
  const { companyId } = await params;
  const filters = parseBoardFilters(await searchParams);
  const caller = await serverCaller();
  const [result, agents] = await Promise.all([
    pageCall(() =>
      caller.issues.list({
        companyId,
        status: filters.status,
        ...(filters.assignee ? { assignee: filters.assignee } : {}),
        ...(filters.cursor ? { cursor: filters.cursor } : {}),
        limit: PAGE_SIZE,
      }),
    ),
    pageCall(() => caller.agents.list({ companyId })),
  ]);
  if (!result.ok) return <AccessDenied title="Issues" message={result.message} />;

  const filtered = filters.status.length > 0 || filters.assignee !== null;
  const viewKey = boardSearchParams({ ...filters, cursor: null }).toString();
  const nextPage = result.data.nextCursor
    ? issuesPath(companyId, boardSearchParams({ ...filters, cursor: result.data.nextCursor }))
    : null;
  const firstPage = filters.cursor
    ? issuesPath(companyId, boardSearchParams({ ...filters, cursor: null }))
    : null;

  return (
    <section aria-labelledby="issues-title" className="space-y-5">
      <div className="flex flex-wrap items-end justify-between gap-4">
        <h1 id="issues-title" className="text-2xl font-semibold tracking-tight">
          Issues
        </h1>
        <IssueFilters
          key={viewKey}
          action={issuesPath(companyId)}
          status={filters.status[0] ?? null}
          assignee={filters.assignee}
          agents={agents.ok ? agents.data : []}
        />
      </div>

      {result.data.items.length === 0 ? (
        <EmptyState title={filtered ? "No issues match these filters" : "No issues yet"}>
          {filtered ? (
            <Link
              href={issuesPath(companyId)}
              className="font-medium text-indigo-700 hover:underline"
            >
              Clear filters
            </Link>
          ) : null}
        </EmptyState>
      ) : (
        <div className="card overflow-x-auto">
          <table className="w-full text-left text-sm" data-testid="issues-table">
            <caption className="sr-only">
              Issues{filtered ? " matching the filters" : ""}, most recent activity first
            </caption>
            <thead className="border-b border-slate-200 bg-slate-50 text-xs font-medium uppercase tracking-wide text-slate-500">
              <tr>
                <th scope="col" className="w-24 px-4 py-2.5">
                  ID
                </th>
                <th scope="col" className="px-4 py-2.5">
                  Title
                </th>
                <th scope="col" className="w-32 px-4 py-2.5">
                  Status
                </th>
                <th scope="col" className="w-40 px-4 py-2.5">
                  Assignee
                </th>
                <th scope="col" className="w-36 px-4 py-2.5 text-right">
                  Last activity
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {result.data.items.map((issue) => (
                <tr key={issue.id} className="hover:bg-slate-50" data-testid="issue-row">
                  <td className="px-4 py-3 font-mono text-xs text-slate-500">{issue.identifier}</td>
                  <td className="px-4 py-3">
                    <span className="flex items-center gap-2">
                      <Link
                        href={issuePath(companyId, issue.id)}
                        className="font-medium text-slate-900 hover:text-indigo-700 hover:underline"
                      >
                        {issue.title}
                      </Link>
                      <RecoveryChip recovery={issue.recovery} />
                    </span>
                  </td>
                  <td className="px-4 py-3">
                    <IssueStatusBadge status={issue.status} />
                  </td>
                  <td className="px-4 py-3 text-slate-600">
                    {issue.assignee?.name ?? <span className="text-slate-400">Unassigned</span>}
                  </td>
                  <td className="px-4 py-3 text-right text-slate-500">
                    <Timestamp date={issue.lastActivityAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      {nextPage || firstPage ? (
        <nav aria-label="Pages" className="flex justify-between text-sm">
          {firstPage ? (
            <Link href={firstPage} className="btn btn-secondary">
              ← First page
            </Link>
          ) : (
            <span />
          )}
          {nextPage ? (
            <Link href={nextPage} className="btn btn-secondary" data-testid="next-page">
              Next page →
            </Link>
          ) : null}
        </nav>
      ) : null}
    </section>
  );
}
