// POST /api/issues/:id/recovery-actions/retry-workspace-export (R-EX-2, R-EX-3): after repairing
// the retained sandbox's transport, ask for the export-only retry of the same run. Only
// `runtime:manage` may send it. The body is core's one schema (shared with tRPC and the CLI).
//
// Answers:
//   200 { actionId, runId, leaseId, requestId, status: "readmitted" | "already_requested", retryState }
//       the sandbox was resumed and verified and the run re-admitted; the reconciler commits the
//       same run with its saved result (a duplicate answers already_requested and writes nothing)
//   409 { code, message, details }  admission refused (sandbox_unavailable, stop_unconfirmed,
//       sentinel_missing, lease_changed, newer_run, copyback_lock_active, ...): nothing written;
//       or the resumed sandbox failed its verification (export_retry_sentinel_mismatch, ...):
//       it is stopped and retained again, nothing re-admitted
//   503 export_retry_resume_failed / export_retry_probe_failed: a lost resume reply or a failed
//       probe; the sandbox is stopped and retained again (retry when it has a new stopped receipt)
//   404 not_found                   no such action on this task (or another company's)
//   422 invalid_request             a bad body (the wrapper), or an action of another kind/run
import { retryWorkspaceExportBody } from "@copyback/core/recovery";
import { retryExportFromConsole } from "~/server/recovery/export-retry";
import { actorOf } from "~/server/routers/activity/actor";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const retryWorkspaceExportInput = retryWorkspaceExportBody;

export const retryWorkspaceExportRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/retry-workspace-export",
  permission: "runtime:manage",
  resource: issueFromPath,
  input: retryWorkspaceExportBody,
  handler: async ({ db, principal, companyId, resource, input }) => {
    const result = await retryExportFromConsole(db, { ...input, companyId, issueId: resource.id, actor: actorOf(principal) });
    const { finalization: _finalization, ...answer } = result;
    return answer;
  },
});
