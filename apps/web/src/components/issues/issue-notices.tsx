/**
 * The task view's notice area (R-UI-1, R-UI-2): later issues show "Restoring saved work…" and
 * held recoveries here, with an "Inspect run" link. Nothing to show yet, so it renders nothing
 * (an empty live region would announce nothing anyway).
 */
export function IssueNotices(_props: { companyId: string; issueId: string }) {
  return null;
}
