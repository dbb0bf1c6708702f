import { z } from "zod";
import { retryWorkspaceExportBody } from "@copyback/core/recovery";
import { retryExportFromConsole } from "~/server/recovery/export-retry";
import { companyProcedure } from "~/server/trpc";
import { actorOf } from "../activity/actor";

/** R-EX-2: the REST body (core's one schema) plus the company and the task. */
export const retryWorkspaceExportInput = retryWorkspaceExportBody.extend({ companyId: z.uuid(), issueId: z.uuid() });

export const retryWorkspaceExportOutput = z.object({
  actionId: z.uuid(),
  runId: z.uuid(),
  leaseId: z.string(),
  requestId: z.uuid(),
  status: z.enum(["readmitted", "already_requested"]),
  retryState: z.enum(["resuming", "readmitted"]),
});

/**
 * The export-only retry (R-EX-2, R-EX-3): the same core service as
 * POST /api/issues/:id/recovery-actions/retry-workspace-export and `copyback recovery
 * retry-export`. Refusals are conflicts (or invalid requests) with a stable code and write nothing.
 */
export const retryRecoveryWorkspaceExport = companyProcedure("runtime:manage")
  .input(retryWorkspaceExportInput)
  .output(retryWorkspaceExportOutput)
  .mutation(async ({ ctx, input }) => {
    const { companyId: _companyId, issueId, ...body } = input;
    const { finalization: _finalization, ...answer } = await retryExportFromConsole(ctx.db, { ...body, companyId: ctx.companyId, issueId, actor: actorOf(ctx.principal) });
    return answer;
  });
