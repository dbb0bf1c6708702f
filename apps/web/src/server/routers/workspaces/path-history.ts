import { z } from "zod";
import { notFound } from "@copyback/core/errors";
import { workspacePathHistory } from "@copyback/core/workspace";
import { companyProcedure } from "~/server/trpc";

export const pathHistoryInput = z.object({
  /** The run whose page links here: its prepared workspace names the host workspace. */
  runId: z.uuid(),
  path: z.string().min(1).max(4096),
  limit: z.number().int().min(1).max(200).default(50),
});

export const pathHistoryOutput = z.object({
  workspaceName: z.string(),
  path: z.string(),
  entries: z.array(
    z.object({
      runId: z.uuid(),
      issue: z.object({ id: z.uuid(), identifier: z.string(), title: z.string() }).nullable(),
      change: z.enum(["written", "deleted"]),
      committedAt: z.date(),
    }),
  ),
});

/**
 * Workspace history for the run page's written paths: which committed runs
 * wrote or deleted this path of the run's host workspace, newest first (the last writer on top).
 * Relative paths only: the host path never leaves the server.
 */
export const getPathHistory = companyProcedure("runs:read")
  .input(pathHistoryInput)
  .output(pathHistoryOutput)
  .query(async ({ ctx, input }) => {
    const prepare = await ctx.db.workspaceOperation.findFirst({
      where: { companyId: ctx.companyId, runId: input.runId, phase: "workspace_prepare", status: "succeeded" },
      orderBy: [{ finishedAt: "desc" }, { id: "desc" }],
      select: { metadata: true },
    });
    const workspaceId = z.object({ executionWorkspaceId: z.uuid() }).safeParse(prepare?.metadata);
    if (!workspaceId.success) throw notFound("The run's workspace");
    const workspace = await ctx.db.executionWorkspace.findFirst({ where: { id: workspaceId.data.executionWorkspaceId, companyId: ctx.companyId }, select: { id: true, name: true } });
    if (!workspace) throw notFound("The run's workspace");
    const history = await workspacePathHistory(ctx.db, { companyId: ctx.companyId, executionWorkspaceId: workspace.id, path: input.path, limit: input.limit });
    const issues = await ctx.db.issue.findMany({ where: { companyId: ctx.companyId, id: { in: history.entries.map((e) => e.issueId) } }, select: { id: true, identifier: true, title: true } });
    const byId = new Map(issues.map((i) => [i.id, i]));
    return {
      workspaceName: workspace.name,
      path: history.path,
      entries: history.entries.map((e) => ({ runId: e.runId, issue: byId.get(e.issueId) ?? null, change: e.change, committedAt: e.committedAt })),
    };
  });
