"use client";

import { useReconstructionOffer } from "./reconstruction-form";
import { RecoveryNotice } from "./recovery-notice";
import { useTaskRecovery, type TaskRecovery } from "./use-task-recovery";

/**
 * The task view's notice area (R-UI-1, R-UI-2): the task's recovery notice, kept current by the
 * live updates (recovery.forIssue is refetched when a recovery action of the company changes).
 * The reconstruction offer is asked only by viewers who received Recovery details (runtime:manage,
 * R-UI-3); the server checks the permission again.
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
  const recovery = useTaskRecovery(companyId, issueId, initial);
  const reconstruction = useReconstructionOffer(companyId, issueId, recovery !== null && recovery.notice.kind !== "none" && recovery.details !== null);
  return <RecoveryNotice companyId={companyId} issueId={issueId} recovery={recovery} reconstruction={reconstruction} />;
}
