// POST /api/issues/:id/recovery-actions/resolve (R-RR-5): a board operator records the outcome of
// a recovery action; for a file-only repair, `outcome: "restored"` with the task's unchanged
// status, the source run's execution reconciliation and the repair evidence. Board operators
// only (`runtime:manage`). Resolution rules (R-RR-5, R-ATT-3's "cannot dismiss this hold") come
// with the recovery work; until then a valid, authorized request answers 501.
import { z } from "zod";
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
  handler: async () => notImplemented("Resolving a recovery action"),
});
