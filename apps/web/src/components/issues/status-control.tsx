"use client";

import { useMutation } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState } from "react";
import { ISSUE_STATUSES, type IssueStatusValue } from "~/server/routers/issues/issue-status";
import { ISSUE_STATUS_LABEL } from "~/components/ui/issue-status-badge";
import { domainCodeOf, userMessageOf } from "~/components/ui/error-message";
import { useTRPC } from "~/trpc/react";

interface Props {
  companyId: string;
  issueId: string;
  status: IssueStatusValue;
  /** The version this page was rendered with; a change made meanwhile makes the update a conflict. */
  statusVersion: number;
}

/** Changes the task's status (issues:write) with optimistic concurrency on its status version. */
export function StatusControl({ companyId, issueId, status, statusVersion }: Props) {
  const trpc = useTRPC();
  const router = useRouter();
  const [choice, setChoice] = useState<IssueStatusValue>(status);
  const [notice, setNotice] = useState<string | null>(null);
  const update = useMutation(
    trpc.issues.updateStatus.mutationOptions({
      onSuccess: () => {
        setNotice("Status updated.");
        router.refresh();
      },
      onError: (error) => {
        // Someone else moved the task: show the current state instead of retrying blindly.
        if (domainCodeOf(error) === "stale_status_version") router.refresh();
      },
    }),
  );

  return (
    <form
      className="space-y-2"
      onSubmit={(event) => {
        event.preventDefault();
        setNotice(null);
        update.mutate({ companyId, issueId, status: choice, expectedStatusVersion: statusVersion });
      }}
    >
      <label
        htmlFor="issue-status"
        className="block text-xs font-medium uppercase tracking-wide text-slate-500"
      >
        Status
      </label>
      <div className="flex gap-2">
        <select
          id="issue-status"
          value={choice}
          onChange={(event) => setChoice(event.target.value as IssueStatusValue)}
          className="field flex-1"
          data-testid="status-select"
        >
          {ISSUE_STATUSES.map((value) => (
            <option key={value} value={value}>
              {ISSUE_STATUS_LABEL[value]}
            </option>
          ))}
        </select>
        <button
          type="submit"
          className="btn btn-secondary"
          disabled={update.isPending || choice === status}
        >
          {update.isPending ? "Saving…" : "Save"}
        </button>
      </div>
      <p
        aria-live="polite"
        className={`text-xs ${update.isError ? "text-red-700" : "text-slate-500"}`}
      >
        {update.isError ? userMessageOf(update.error) : notice}
      </p>
    </form>
  );
}
