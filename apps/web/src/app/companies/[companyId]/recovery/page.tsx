import type { Metadata } from "next";
import Link from "next/link";
import { Timestamp } from "~/components/format/timestamp";
import { issuePath, recoveryPath } from "~/components/nav/paths";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { IssueStatusBadge } from "~/components/ui/issue-status-badge";
import { serverCaller } from "~/trpc/server";
import { pageCall } from "../../../_lib/page-call";

export const metadata: Metadata = { title: "Recovery" };

type SearchParams = Record<string, string | string[] | undefined>;

const PAGE_SIZE = 50;

const STATE_LABEL = {
  attention: { text: "Needs attention", tone: "bg-amber-50 text-amber-800 ring-amber-600/20" },
  restoring: { text: "Restoring saved work…", tone: "bg-indigo-50 text-indigo-700 ring-indigo-600/20" },
} as const;

/**
 * Every open recovery action of the company across its tasks, the one waiting longest first,
 * with its age and next action, each linking to its task. Kept current by <LiveUpdates> (its
 * router.refresh() re-renders this page when a recovery action changes).
 */
export default async function RecoveryPage({
  params,
  searchParams,
}: {
  params: Promise<{ companyId: string }>;
  searchParams: Promise<SearchParams>;
}) {
  const { companyId } = await params;
  const rawCursor = (await searchParams).cursor;
  const cursor = typeof rawCursor === "string" && rawCursor !== "" ? rawCursor : undefined;
  const caller = await serverCaller();
  const result = await pageCall(() =>
    caller.recovery.listOpen({ companyId, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
  );
  if (!result.ok) return <AccessDenied title="Recovery" message={result.message} />;
  const { items, nextCursor } = result.data;

  return (
    <section aria-labelledby="recovery-title" className="space-y-5">
      <div className="space-y-1">
        <h1 id="recovery-title" className="text-2xl font-semibold tracking-tight">
          Recovery
        </h1>
        <p className="text-sm text-slate-500">
          Open recovery actions across this company&apos;s tasks, the one waiting longest first.
        </p>
      </div>
      {items.length === 0 ? (
        <EmptyState title="Nothing to recover">Every task&apos;s work reached its workspace.</EmptyState>
      ) : (
        <ol className="card divide-y divide-slate-100" data-testid="recovery-list">
          {items.map((item) => {
            const state = STATE_LABEL[item.state];
            return (
              <li key={item.actionId} className="space-y-2 px-5 py-4" data-testid="recovery-row">
                <div className="flex flex-wrap items-center justify-between gap-3">
                  <div className="flex min-w-0 items-center gap-2">
                    <Link
                      href={issuePath(companyId, item.issue.id)}
                      className="font-mono text-xs font-medium text-indigo-700 hover:underline"
                    >
                      {item.issue.identifier}
                    </Link>
                    <Link
                      href={issuePath(companyId, item.issue.id)}
                      className="truncate text-sm font-medium text-slate-900 hover:text-indigo-700 hover:underline"
                    >
                      {item.issue.title}
                    </Link>
                    <IssueStatusBadge status={item.issue.status} />
                  </div>
                  <div className="flex shrink-0 items-center gap-3 text-xs text-slate-500">
                    <span
                      data-testid="recovery-row-state"
                      className={`inline-flex items-center whitespace-nowrap rounded-full px-2 py-0.5 font-medium ring-1 ring-inset ${state.tone}`}
                    >
                      {state.text}
                    </span>
                    <span>
                      open since <Timestamp date={item.createdAt} />
                    </span>
                  </div>
                </div>
                <p className="text-sm text-slate-700">{item.causeInWords}</p>
                {item.nextAction ? (
                  <p className="text-sm text-slate-600" data-testid="recovery-row-next-action">
                    <span className="font-medium text-slate-700">Next: </span>
                    {item.nextAction}
                  </p>
                ) : null}
              </li>
            );
          })}
        </ol>
      )}
      {cursor || nextCursor ? (
        <nav aria-label="Pages" className="flex justify-between text-sm">
          {cursor ? (
            <Link href={recoveryPath(companyId)} className="btn btn-secondary">
              ← Oldest
            </Link>
          ) : (
            <span />
          )}
          {nextCursor ? (
            <Link href={recoveryPath(companyId, nextCursor)} className="btn btn-secondary">
              Newer →
            </Link>
          ) : null}
        </nav>
      ) : null}
    </section>
  );
}
