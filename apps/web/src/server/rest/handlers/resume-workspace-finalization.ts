// POST /api/issues/:id/recovery-actions/resume-workspace-finalization (R-ATT-1, R-ATT-2, R-ATT-3):
// an operator's attestation that an unverified copyback owner's controller and its copyback
// subprocesses have stopped. Only `runtime:confirm_owner_stop` may send it: active owners and
// administrators, the trusted local board and instance administrators; runtime managers and
// agents are refused (403). The body is core's one schema (shared with tRPC and the CLI).
//
// Answers:
//   200 { actionId, runId, leaseIds, status: "attested" | "already_attested" }  the receipt is
//       released and the evidence recorded; the reconciler finishes the copyback of the same run
//       (a repeat of the same attestation answers already_attested and writes nothing)
//   409 { code, message, details }  admission refused (copyback_lock_active, controller_alive,
//       owner_changed, newer_run, result_unbound, ...): nothing written
//   404 not_found                   no such action on this task (or another company's)
//   422 invalid_request             not an attestation (the wrapper)
import { attestOwnerStop, attestOwnerStopBody } from "@copyback/core/recovery";
import { actorOf } from "~/server/routers/activity/actor";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const resumeWorkspaceFinalizationRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/resume-workspace-finalization",
  permission: "runtime:confirm_owner_stop",
  resource: issueFromPath,
  input: attestOwnerStopBody,
  handler: ({ db, principal, companyId, resource, input }) =>
    attestOwnerStop(db, { ...input, companyId, issueId: resource.id, actor: actorOf(principal) }),
});
