// The statuses of an open recovery action: the partial unique index
// issue_recovery_actions_one_open_per_fingerprint and the open-action indexes are defined over
// exactly these (R-OWN-5), so every reader and writer asks "is it open?" through this one list.
// Pure: the policies and the task's notice read it too.

export const OPEN_RECOVERY_ACTION_STATUSES = ["active", "escalated"] as const;
export type OpenRecoveryActionStatus = (typeof OPEN_RECOVERY_ACTION_STATUSES)[number];

/** Whether a recovery action in `status` still waits for its owner (resolved and cancelled ones do not). */
export function isOpenRecoveryActionStatus(status: string): status is OpenRecoveryActionStatus {
  return (OPEN_RECOVERY_ACTION_STATUSES as readonly string[]).includes(status);
}
