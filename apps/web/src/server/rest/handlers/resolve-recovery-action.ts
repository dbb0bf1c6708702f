// POST /api/issues/:id/recovery-actions/resolve (R-RR-5, R-RR-6, R-FO-5): a board operator records
// the outcome of a file hold (a legacy repair hold or a file-recovery obligation): `restored` with
// the task's unchanged status, the source run's execution reconciliation and the repair evidence,
// or a deliberate `false_positive` / `cancelled` disposition with a note. Board operators only
// (`runtime:manage`). The body and every rule are core's (resolveRecoveryAction, shared with
// tRPC and the CLI). Generic resolution never dismisses an unverified copyback owner hold
// (R-ATT-3) or an export-only-retry hold.
//
// Answers:
//   200 { actionId, runId, leaseIds, outcome, status: "resolved" | "already_resolved" }  the exact
//       action and lease ids; the task, its owner, conversation and locks, the run and the
//       retained allocation are unchanged; nothing is queued
//   409 { code, message, details }  refused (source_status_changed, source_run_active,
//       stop_receipt_missing, retained_source_missing, hold_requires_attestation, ...): nothing written
//   404 not_found                   no such action on this task (or another company's)
//   422 invalid_request             not a resolution (the wrapper)
import { resolveRecoveryAction, resolveRecoveryActionBody } from "@copyback/core/recovery";
import { actorOf } from "~/server/routers/activity/actor";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

export const resolveRecoveryActionRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/resolve",
  permission: "runtime:manage",
  resource: issueFromPath,
  input: resolveRecoveryActionBody,
  handler: ({ db, principal, companyId, resource, input }) =>
    resolveRecoveryAction(db, { ...input, companyId, issueId: resource.id, actor: actorOf(principal) }),
});
