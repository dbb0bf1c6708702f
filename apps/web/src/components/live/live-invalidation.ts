// Which cached queries a live change makes stale. tRPC keys every query by its procedure path
// first ([["issues", "get"], { input, type }]) and TanStack Query matches filters by prefix, so
// [["issues"]] covers every query of the issues router: the list, one issue, its messages.
// Only active queries refetch; the rest are just marked stale.
import type { LiveEventEntity } from "@copyback/db/notify";
import type { QueryKey } from "@tanstack/react-query";
import type { LiveChange } from "~/server/live/wire";

/** Router namespaces whose queries show each table's rows (directly or in summaries). */
export const LIVE_INVALIDATION: Readonly<Record<LiveEventEntity, readonly string[]>> = {
  issues: ["issues"],
  issue_messages: ["issues"],
  // An issue page lists its runs; the run page shows the run.
  heartbeat_runs: ["runs", "issues"],
  // Recovery notices show on the issue (recovery.forIssue, the board's chip), the run and the
  // company's Recovery page (recovery.listOpen).
  issue_recovery_actions: ["issues", "runs", "recovery"],
  run_events: ["runs"],
  activity_log: ["activity"],
  // R-RC-3, R-RC-5: an intent recorded, delivered or cancelled changes the task's notice and its
  // offer (recovery.forIssue, recovery.reconstructionOffer), the board's chip and the Recovery page.
  reconstruction_intents: ["recovery", "issues"],
  // R-RC-3 R-UI-3: a task's new file shows in its Attachments section (issues.attachments) and in
  // the sources "Continue from saved sources" offers (recovery.reconstructionOffer).
  issue_attachments: ["issues", "recovery"],
};

export function routersToRefresh(change: Pick<LiveChange, "entity">): readonly string[] {
  return LIVE_INVALIDATION[change.entity] ?? [];
}

export function routerQueryKey(router: string): QueryKey {
  return [[router]];
}
