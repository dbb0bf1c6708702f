import type { IssueStatusValue } from "~/server/routers/issues/issue-status";

export const ISSUE_STATUS_LABEL: Record<IssueStatusValue, string> = {
  backlog: "Backlog",
  todo: "To do",
  in_progress: "In progress",
  in_review: "In review",
  blocked: "Blocked",
  done: "Done",
  cancelled: "Cancelled",
};

const TONE: Record<IssueStatusValue, string> = {
  backlog: "bg-slate-100 text-slate-700 ring-slate-200",
  todo: "bg-sky-50 text-sky-800 ring-sky-200",
  in_progress: "bg-amber-50 text-amber-800 ring-amber-200",
  in_review: "bg-violet-50 text-violet-800 ring-violet-200",
  blocked: "bg-red-50 text-red-800 ring-red-200",
  done: "bg-emerald-50 text-emerald-800 ring-emerald-200",
  cancelled: "bg-slate-50 text-slate-500 ring-slate-200",
};

export function IssueStatusBadge({ status }: { status: IssueStatusValue }) {
  return (
    <span
      data-testid="issue-status"
      className={`inline-flex items-center whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ring-1 ring-inset ${TONE[status]}`}
    >
      {ISSUE_STATUS_LABEL[status]}
    </span>
  );
}
