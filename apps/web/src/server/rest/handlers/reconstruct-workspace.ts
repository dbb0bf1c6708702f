// POST /api/issues/:id/recovery-actions/reconstruct-workspace (R-UI-3, R-RC-2): "Continue from
// saved sources" after confirmed destruction of the exact sandbox: the surviving attachments to
// use, a description of the missing work and the observed outcomes of external actions.
// `runtime:manage`. The body is core's one schema (shared with tRPC and the CLI); the admission
// is core's service (decideReconstruction under the finalization lock and row locks).
//
// Answers:
//   201 { kind: "recorded", intent }  the attachment hashes and the fresh-session delivery intent
//       were recorded (status pending); the worker's reconciler delivers it as a new run
//   200 { kind: "adopted", intent }   a repeated submission (same requestId, or same action):
//       the first intent, nothing written (R-RC-3)
//   409 { code, message, details }    refused, nothing written: source_not_destroyed (a retained or
//       unverified sandbox: use the export-only retry or file recovery), status_version_changed,
//       active_copyback_owner, execution_owner, competing_recovery, newer_execution,
//       later_cancellation_unrepaired, external_action_uncertain, result_unbound,
//       descriptor_mismatch, task_closed, task_reassigned, action_closed, attachment_changed,
//       attachment_unavailable, request_reused
//   404 not_found / action_not_found / run_not_found / lease_not_found
//   422 invalid_request (a bad body), action_mismatch (another kind of action, run or lease),
//       foreign_attachment (an attachment of another task or company)
//   503 instance_root_unknown (the console cannot read the attachment store)
import { reconstructWorkspaceBody } from "@copyback/core/recovery";
import { reconstructFromConsole } from "~/server/recovery/reconstruction";
import { actorOf } from "~/server/routers/activity/actor";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const reconstructWorkspaceInput = reconstructWorkspaceBody;

export const reconstructWorkspaceRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/reconstruct-workspace",
  permission: "runtime:manage",
  resource: issueFromPath,
  input: reconstructWorkspaceBody,
  handler: async ({ db, principal, companyId, resource, input }) => {
    const outcome = await reconstructFromConsole(db, { ...input, companyId, issueId: resource.id, actor: actorOf(principal) });
    return Response.json(outcome, { status: outcome.kind === "recorded" ? 201 : 200, headers: { "cache-control": "no-store" } });
  },
});
