import type { Metadata } from "next";
import Link from "next/link";
import { describeActivity } from "~/components/activity/describe-activity";
import { Timestamp } from "~/components/format/timestamp";
import { activityPath, issuePath } from "~/components/nav/paths";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { serverCaller } from "~/trpc/server";
import { pageCall } from "../../../_lib/page-call";

export const metadata: Metadata = { title: "Activity" };

type SearchParams = Record<string, string | string[] | undefined>;

/** The company's audit trail (activity:read), newest first, 50 per page. */
export default async function ActivityPage({
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
    caller.activity.list({ companyId, limit: 50, ...(cursor ? { cursor } : {}) }),
  );
  if (!result.ok) return <AccessDenied title="Activity" message={result.message} />;
  const { items, nextCursor } = result.data;

  return (
    <section aria-labelledby="activity-title" className="space-y-5">
      <h1 id="activity-title" className="text-2xl font-semibold tracking-tight">
        Activity
      </h1>
      {items.length === 0 ? (
        <EmptyState title="No activity yet" />
      ) : (
        <ol className="card divide-y divide-slate-100" data-testid="activity-list">
          {items.map((item) => {
            const phrase = describeActivity(item.action, item.details);
            return (
              <li
                key={item.id}
                className="flex items-baseline justify-between gap-4 px-5 py-3 text-sm"
                data-testid="activity-row"
              >
                <p className="min-w-0 text-slate-700">
                  <span className="font-medium text-slate-900">{item.actor.name}</span>{" "}
                  {phrase.verb}
                  {item.issue ? (
                    <>
                      {" "}
                      <Link
                        href={issuePath(companyId, item.issue.id)}
                        className="font-mono text-xs font-medium text-indigo-700 hover:underline"
                      >
                        {item.issue.identifier}
                      </Link>
                    </>
                  ) : null}
                  {phrase.suffix ? ` ${phrase.suffix}` : null}
                </p>
                <Timestamp date={item.createdAt} className="shrink-0 text-xs text-slate-500" />
              </li>
            );
          })}
        </ol>
      )}
      {cursor || nextCursor ? (
        <nav aria-label="Pages" className="flex justify-between text-sm">
          {cursor ? (
            <Link href={activityPath(companyId)} className="btn btn-secondary">
              ← Newest
            </Link>
          ) : (
            <span />
          )}
          {nextCursor ? (
            <Link href={activityPath(companyId, nextCursor)} className="btn btn-secondary">
              Older →
            </Link>
          ) : null}
        </nav>
      ) : null}
    </section>
  );
}
