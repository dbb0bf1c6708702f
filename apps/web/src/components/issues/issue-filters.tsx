"use client";

import type { Route } from "next";
import Form from "next/form";
import { useEffect, useState } from "react";
import { ISSUE_STATUSES, type IssueStatusValue } from "~/server/routers/issues/issue-status";
import { ISSUE_STATUS_LABEL } from "~/components/ui/issue-status-badge";

interface Props {
  action: Route;
  status: IssueStatusValue | null;
  assignee: string | null;
  agents: ReadonlyArray<{ id: string; name: string; archived: boolean }>;
}

/**
 * Status and assignee filters as a GET form: the filters live in the URL (shareable, back button
 * works) and the server filters the list. With JavaScript a change applies at once through
 * client-side navigation; without it, the Apply button submits the same form.
 */
export function IssueFilters({ action, status, assignee, agents }: Props) {
  const [enhanced, setEnhanced] = useState(false);
  useEffect(() => setEnhanced(true), []);
  const submit = (event: React.ChangeEvent<HTMLSelectElement>) =>
    event.currentTarget.form?.requestSubmit();

  return (
    <Form action={action} className="flex flex-wrap items-end gap-3" aria-label="Filter issues">
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
        Status
        <select
          name="status"
          defaultValue={status ?? ""}
          onChange={submit}
          className="field min-w-40"
          data-testid="filter-status"
        >
          <option value="">All statuses</option>
          {ISSUE_STATUSES.map((value) => (
            <option key={value} value={value}>
              {ISSUE_STATUS_LABEL[value]}
            </option>
          ))}
        </select>
      </label>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-600">
        Assignee
        <select
          name="assignee"
          defaultValue={assignee ?? ""}
          onChange={submit}
          className="field min-w-40"
          data-testid="filter-assignee"
        >
          <option value="">Anyone</option>
          <option value="unassigned">Unassigned</option>
          {agents.map((agent) => (
            <option key={agent.id} value={agent.id}>
              {agent.name}
              {agent.archived ? " (archived)" : ""}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className={enhanced ? "sr-only" : "btn btn-secondary"}>
        Apply filters
      </button>
    </Form>
  );
}
