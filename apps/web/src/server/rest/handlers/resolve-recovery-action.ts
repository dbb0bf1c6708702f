// POST /api/issues/:id/recovery-actions/resolve (R-RR-5): a board operator records the outcome of
// a recovery action; for a file-only repair, `outcome: "restored"` with the task's unchanged
// status, the source run's execution reconciliation and the repair evidence. Board operators
// only (`runtime:manage`). The resolution rules of R-RR-5 come with the file-recovery work; until
// then a valid, authorized request answers 501, except for R-ATT-3's rule, which holds already:
// generic resolution, false-positive included, cannot dismiss an unverified copyback owner hold
// (409 hold_requires_attestation, nothing written). Only the run's committed copyback resolves
// it, after an operator's stop attestation (resume-workspace-finalization).
import { z } from "zod";
import { conflict } from "@copyback/core/errors";
import { decideResolve } from "@copyback/core/recovery/policies/decide-resolve";
import { notImplemented } from "../responses";
import { restRoute } from "../rest-route";
import { issueFromPath } from "../resources";

const ISSUE_STATUSES = ["backlog", "todo", "in_progress", "in_review", "blocked", "done", "cancelled"] as const;

const evidence = z.record(z.string(), z.unknown());

export const resolveRecoveryActionInput = z
  .strictObject({
    actionId: z.uuid(),
    outcome: z.enum(["restored", "false_positive", "cancelled"]),
    sourceIssueStatus: z.enum(ISSUE_STATUSES).optional(),
    executionReconciliation: evidence.optional(),
    workspaceRepairEvidence: evidence.optional(),
    note: z.string().trim().max(20_000).optional(),
  })
  .superRefine((value, ctx) => {
    // R-RR-5: a file-only repair names the unchanged status, the reconciliation and the evidence.
    if (value.outcome !== "restored") return;
    for (const field of ["sourceIssueStatus", "executionReconciliation", "workspaceRepairEvidence"] as const) {
      if (value[field] === undefined) ctx.addIssue({ code: "custom", path: [field], message: `${field} is required when outcome is "restored"` });
    }
  });

export const resolveRecoveryActionRoute = restRoute({
  method: "POST",
  path: "/api/issues/:id/recovery-actions/resolve",
  permission: "runtime:manage",
  resource: issueFromPath,
  input: resolveRecoveryActionInput,
  handler: async ({ db, companyId, resource, input }) => {
    const action = await db.issueRecoveryAction.findFirst({
      where: { id: input.actionId, companyId, issueId: resource.id },
      select: { id: true, cause: true, runId: true },
    });
    // R-ATT-3 (core's decideResolve): whatever the outcome asked for, and whatever the action's status.
    const decision = action ? decideResolve(action) : { kind: "not_implemented" as const };
    if (decision.kind === "reject") throw conflict(decision.code, decision.message, { actionId: action?.id, runId: action?.runId });
    return notImplemented("Resolving a recovery action");
  },
});
