import type { Metadata } from "next";
import Link from "next/link";
import {
  boardSearchParams,
  parseBoardFilters,
  type SearchParams,
} from "~/components/issues/board-filters";
import { IssueFilters } from "~/components/issues/issue-filters";
import { IssueTable } from "~/components/issues/issue-table";
import { issuesPath } from "~/components/nav/paths";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
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
        <IssueTable companyId={companyId} rows={result.data.items} filtered={filtered} />
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
