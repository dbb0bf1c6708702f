// Every console URL is built here, so a route move is one edit. Typed routes: the casts confine
// the dynamic segments to the console's own route shapes.
import type { Route } from "next";

export type CompanySection = "issues" | "recovery" | "sandboxes" | "environments" | "activity" | "members" | "settings/api-keys";

export function companyPath(companyId: string, section: CompanySection): Route {
  return `/companies/${companyId}/${section}` as Route;
}

export function issuesPath(companyId: string, params?: URLSearchParams): Route {
  const query = params?.toString();
  return `/companies/${companyId}/issues${query ? `?${query}` : ""}` as Route;
}

export function issuePath(companyId: string, issueId: string): Route {
  return `/companies/${companyId}/issues/${issueId}` as Route;
}

export function runPath(companyId: string, runId: string): Route {
  return `/companies/${companyId}/runs/${runId}` as Route;
}

export function activityPath(companyId: string, cursor?: string | null): Route {
  return `/companies/${companyId}/activity${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}` as Route;
}

export function recoveryPath(companyId: string, cursor?: string | null): Route {
  return `/companies/${companyId}/recovery${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}` as Route;
}

/** Workspace history of one path of a run's host workspace. */
export function pathHistoryPath(companyId: string, runId: string, path: string): Route {
  return `/companies/${companyId}/runs/${runId}/history?path=${encodeURIComponent(path)}` as Route;
}
