"use client";

// The board's table, rendered from plain row data. A client component on purpose: a server
// component's markup travels in the page's RSC payload element by element (50 rows of links,
// badges and class names were ~80 KiB and most of the board's render time), while a client
// component's payload is only its props, the rows' data. The HTML is the same either way.
import Link from "next/link";
import { Timestamp } from "~/components/format/timestamp";
import { issuePath } from "~/components/nav/paths";
import { IssueStatusBadge } from "~/components/ui/issue-status-badge";
import type { RouterOutputs } from "~/components/trpc-types";
import { RecoveryChip } from "./recovery-chip";

export type IssueTableRow = RouterOutputs["issues"]["list"]["items"][number];

export function IssueTable({
  companyId,
  rows,
  filtered,
}: {
  companyId: string;
  rows: IssueTableRow[];
  filtered: boolean;
}) {
  return (
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
          {rows.map((issue) => (
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
  );
}
