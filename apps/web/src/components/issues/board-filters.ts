// The issues board's URL state (?status=…&assignee=…&cursor=…) <-> issues.list input. Unknown
// values are dropped rather than failing the page: a stale bookmark still opens the board.
import {
  ISSUE_STATUSES,
  isIssueStatus,
  type IssueStatusValue,
} from "~/server/routers/issues/issue-status";

export type SearchParams = Record<string, string | string[] | undefined>;

export interface BoardFilters {
  status: IssueStatusValue[];
  /** An agent id, "unassigned", or null for anyone. */
  assignee: string | null;
  cursor: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function all(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value])
    .flatMap((v) => v.split(","))
    .filter((v) => v !== "");
}

export function parseBoardFilters(params: SearchParams): BoardFilters {
  const status = [...new Set(all(params.status).filter(isIssueStatus))].sort(
    (a, b) => ISSUE_STATUSES.indexOf(a) - ISSUE_STATUSES.indexOf(b),
  );
  const assignee = all(params.assignee)[0];
  const cursor = all(params.cursor)[0];
  return {
    status,
    assignee: assignee === "unassigned" || (assignee && UUID.test(assignee)) ? assignee : null,
    cursor: cursor && cursor.length <= 200 ? cursor : null,
  };
}

/** The URL query of a board view; `cursor` is omitted for the first page. */
export function boardSearchParams(filters: BoardFilters): URLSearchParams {
  const params = new URLSearchParams();
  for (const status of filters.status) params.append("status", status);
  if (filters.assignee) params.set("assignee", filters.assignee);
  if (filters.cursor) params.set("cursor", filters.cursor);
  return params;
}
