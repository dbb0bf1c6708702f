import type { Metadata } from "next";
import Link from "next/link";
import { Timestamp } from "~/components/format/timestamp";
import { issuePath, runPath } from "~/components/nav/paths";
import { AccessDenied } from "~/components/ui/access-denied";
import { EmptyState } from "~/components/ui/empty-state";
import { serverCaller } from "~/trpc/server";
import { pageCall } from "../../../../../_lib/page-call";

export const metadata: Metadata = { title: "Workspace history" };

/** Which committed runs wrote or deleted one path of this run's host workspace, newest first. */
export default async function PathHistoryPage({
  params,
  searchParams,
}: {
  params: Promise<{ companyId: string; runId: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { companyId, runId } = await params;
  const raw = (await searchParams).path;
  const path = typeof raw === "string" ? raw : "";
  const caller = await serverCaller();
  const result = await pageCall(() => caller.workspaces.pathHistory({ companyId, runId, path }));
  if (!result.ok) return <AccessDenied title="Workspace history" message={result.message} />;
  const { workspaceName, entries } = result.data;
  return (
    <section aria-labelledby="history-title" className="space-y-5">
      <div className="space-y-1">
        <h1 id="history-title" className="text-2xl font-semibold tracking-tight">
          <span className="font-mono text-xl">{result.data.path}</span>
        </h1>
        <p className="text-sm text-slate-500">
          History in workspace {workspaceName}: the committed runs that wrote or deleted it, the last one first.{" "}
          <Link href={runPath(companyId, runId)} className="text-indigo-700 hover:underline">
            Back to the run
          </Link>
        </p>
      </div>
      {entries.length === 0 ? (
        <EmptyState title="No committed run changed this path">It was never written or deleted by a copyback.</EmptyState>
      ) : (
        <ol className="card divide-y divide-slate-100" data-testid="path-history">
          {entries.map((e) => (
            <li key={`${e.runId}-${e.committedAt.toISOString()}`} className="flex flex-wrap items-center justify-between gap-3 px-5 py-3 text-sm" data-testid="path-history-row">
              <span className="flex items-center gap-2">
                <span className={e.change === "written" ? "text-emerald-700" : "text-red-700"}>{e.change}</span>
                <Link href={runPath(companyId, e.runId)} className="font-mono text-xs text-indigo-700 hover:underline">
                  run {e.runId.slice(0, 8)}
                </Link>
                {e.issue ? (
                  <Link href={issuePath(companyId, e.issue.id)} className="text-slate-700 hover:underline">
                    {e.issue.identifier} {e.issue.title}
                  </Link>
                ) : null}
              </span>
              <span className="text-xs text-slate-500">
                committed <Timestamp date={e.committedAt} />
              </span>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
