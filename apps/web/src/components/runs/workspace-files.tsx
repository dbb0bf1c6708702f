import Link from "next/link";
import type { RouterOutputs } from "~/components/trpc-types";
import { formatBytes } from "~/components/format/bytes";
import { pathHistoryPath } from "~/components/nav/paths";

type RunWorkspace = RouterOutputs["runs"]["workspace"];

const UNAVAILABLE: Record<Extract<NonNullable<RunWorkspace["workspace"]>["listing"], { kind: "unavailable" }>["reason"], string> = {
  missing: "The workspace directory does not exist on this host.",
  not_a_directory: "The workspace path on this host is not a directory.",
  unreadable: "The workspace directory cannot be read by the console.",
  invalid_exclusions: "The workspace's excluded paths are not valid, so its files are not listed.",
};

/** Links each written or deleted path to its workspace history when given. */
type HistoryLink = { companyId: string; runId: string } | undefined;

/** What this run copied back, then the execution workspace's files as they are now. */
export function WorkspaceFiles({ data, history }: { data: RunWorkspace; history?: HistoryLink }) {
  return (
    <div className="space-y-5">
      <RunChanges changes={data.changes} history={history} />
      {data.workspace ? (
        <div>
          <h3 className="text-xs font-medium uppercase tracking-wide text-slate-500">
            Files in <span className="normal-case">{data.workspace.name}</span>
          </h3>
          {data.workspace.listing.kind === "unavailable" ? (
            <p className="mt-2 text-sm text-slate-500">{UNAVAILABLE[data.workspace.listing.reason]}</p>
          ) : data.workspace.listing.entries.length === 0 ? (
            <p className="mt-2 text-sm text-slate-500">The workspace is empty.</p>
          ) : (
            <>
              <ul className="mt-2 max-h-96 overflow-y-auto font-mono text-xs" data-testid="workspace-listing">
                {data.workspace.listing.entries.map((entry) => (
                  <li key={entry.path} className="flex justify-between gap-4 py-0.5" data-testid="workspace-entry" data-kind={entry.kind}>
                    <span className="min-w-0 break-all text-slate-800">
                      {entry.path}
                      {entry.kind === "directory" ? "/" : ""}
                      {entry.kind === "symlink" ? <span className="ml-2 font-sans text-slate-500">(link)</span> : null}
                    </span>
                    <span className="shrink-0 text-slate-500">{entry.size !== null ? formatBytes(entry.size) : ""}</span>
                  </li>
                ))}
              </ul>
              {data.workspace.listing.more > 0 ? (
                <p className="mt-2 text-xs text-slate-500" data-testid="workspace-more">
                  {data.workspace.listing.moreIsLowerBound ? "More than " : ""}
                  {data.workspace.listing.more.toLocaleString("en")} more not shown.
                </p>
              ) : null}
            </>
          )}
        </div>
      ) : (
        <p className="text-sm text-slate-500">This task has no execution workspace.</p>
      )}
    </div>
  );
}

function RunChanges({ changes, history }: { changes: RunWorkspace["changes"]; history: HistoryLink }) {
  if (!changes) return <p className="text-sm text-slate-500">This run has not copied any files back yet.</p>;
  if (changes.omitted)
    return <p className="text-sm text-slate-600">The sandbox's files could not be copied back safely and were left out.</p>;
  if (changes.unchanged || (changes.written.total === 0 && changes.deleted.total === 0))
    return <p className="text-sm text-slate-600">This run changed no files in the workspace.</p>;
  return (
    <div className="grid gap-4 sm:grid-cols-2" data-testid="run-changes">
      <PathList title="Written by this run" list={changes.written} testId="run-written" history={history} />
      <PathList title="Deleted by this run" list={changes.deleted} testId="run-deleted" history={history} />
    </div>
  );
}

function PathList({ title, list, testId, history }: { title: string; list: { paths: string[] | null; total: number }; testId: string; history: HistoryLink }) {
  return (
    <div>
      <h3 className="text-xs font-medium uppercase tracking-wide text-slate-500">
        {title} (<span data-testid={`${testId}-count`}>{list.total.toLocaleString("en")}</span>)
      </h3>
      {list.total === 0 ? (
        <p className="mt-1 text-sm text-slate-500">None.</p>
      ) : list.paths === null ? (
        // The operation recorded how many, not which.
        <p className="mt-1 text-sm text-slate-500">
          {list.total.toLocaleString("en")} {list.total === 1 ? "entry" : "entries"}; the paths were not recorded.
        </p>
      ) : (
        <ul className="mt-1 font-mono text-xs text-slate-800" data-testid={testId}>
          {list.paths.map((p) => (
            <li key={p} className="break-all">
              {history ? (
                <Link href={pathHistoryPath(history.companyId, history.runId, p)} className="hover:text-indigo-700 hover:underline" title="Which runs wrote or deleted this path">
                  {p}
                </Link>
              ) : (
                p
              )}
            </li>
          ))}
          {list.total > list.paths.length ? (
            <li className="font-sans text-slate-500">{(list.total - list.paths.length).toLocaleString("en")} more</li>
          ) : null}
        </ul>
      )}
    </div>
  );
}
