import { z } from "zod";
import { notFound } from "@copyback/core/errors";
import { companyProcedure } from "~/server/trpc";

export const runFinalizationInput = z.object({ runId: z.uuid() });

export const runFinalizationOutput = z.object({
  /** The native finalization coordinator; null when the run never had one (legacy or unfinished). */
  coordinator: z
    .object({
      phase: z.enum([
        "observed",
        "result_accepted",
        "workspace_finalizing",
        "arbitrating",
        "committed",
        "retryable_failure",
        "terminal_failure",
      ]),
      attempt: z.number().int(),
      failureCode: z.string().nullable(),
      nextAttemptAt: z.date().nullable(),
      committedAt: z.date().nullable(),
      updatedAt: z.date(),
    })
    .nullable(),
  workspaceOperations: z.array(
    z.object({
      id: z.uuid(),
      phase: z.enum(["workspace_prepare", "workspace_restore", "workspace_finalize"]),
      status: z.enum(["running", "succeeded", "failed"]),
      errorCode: z.string().nullable(),
      startedAt: z.date(),
      finishedAt: z.date().nullable(),
    }),
  ),
});

/**
 * "Finalization details" of the run inspection page: operator diagnostics, so only principals
 * with runtime:manage may read them (R-UI-2: diagnostics and operator guidance stay with operators).
 */
export const getRunFinalization = companyProcedure("runtime:manage")
  .input(runFinalizationInput)
  .output(runFinalizationOutput)
  .query(async ({ ctx, input }) => {
    const run = await ctx.db.heartbeatRun.findFirst({
      where: { id: input.runId, companyId: ctx.companyId },
      select: {
        finalization: {
          select: {
            phase: true,
            attempt: true,
            failureCode: true,
            nextAttemptAt: true,
            committedAt: true,
            updatedAt: true,
          },
        },
        workspaceOperations: {
          where: { companyId: ctx.companyId },
          orderBy: [{ startedAt: "asc" }, { id: "asc" }],
          take: 200,
          select: {
            id: true,
            phase: true,
            status: true,
            errorCode: true,
            startedAt: true,
            finishedAt: true,
          },
        },
      },
    });
    if (!run) throw notFound("The run");
    return { coordinator: run.finalization, workspaceOperations: run.workspaceOperations };
  });
