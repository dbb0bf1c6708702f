"use client";

import { RecoveryNotice } from "./recovery-notice";
import { useTaskRecovery, type TaskRecovery } from "./use-task-recovery";

/**
 * The task view's notice area (R-UI-1, R-UI-2): the task's recovery notice, kept current by the
 * live updates (recovery.forIssue is refetched when a recovery action of the company changes).
 */
export function IssueNotices({
  companyId,
  issueId,
  initial,
}: {
  companyId: string;
  issueId: string;
  initial: TaskRecovery | null;
}) {
  return <RecoveryNotice companyId={companyId} issueId={issueId} recovery={useTaskRecovery(companyId, issueId, initial)} />;
}
