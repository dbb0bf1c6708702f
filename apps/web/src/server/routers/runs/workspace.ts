import { z } from "zod";
import { notFound } from "@copyback/core/errors";
import { readIsolated } from "@copyback/core/leases";
import { companyProcedure } from "~/server/trpc";
import { hostIsolationReason } from "~/server/workspace/isolation-reason";
import { DEFAULT_LISTING_LIMIT, listWorkspaceFiles } from "~/server/workspace/list-workspace-files";
import { finalizeChangesOf } from "./finalize-changes";

export const runWorkspaceInput = z.object({ runId: z.uuid() });

/** Paths are null when the operation recorded counts only. */
const changeList = z.object({ paths: z.array(z.string()).nullable(), total: z.number().int() });

export const runWorkspaceOutput = z.object({
  /** The execution workspace on this host; null when the run's task has none. */
  workspace: z
    .object({
      name: z.string(),
      listing: z.discriminatedUnion("kind", [
        z.object({
          kind: z.literal("listed"),
          entries: z.array(
            z.object({
              path: z.string(),
              kind: z.enum(["file", "directory", "symlink", "other"]),
              size: z.number().int().nullable(),
            }),
          ),
          more: z.number().int(),
          moreIsLowerBound: z.boolean(),
        }),
        z.object({ kind: z.literal("unavailable"), reason: z.enum(["missing", "not_a_directory", "unreadable", "invalid_exclusions"]) }),
      ]),
    })
    .nullable(),
  /** What this run's copyback wrote and deleted (its succeeded workspace_finalize); null before. */
  changes: z
    .object({ written: changeList, deleted: changeList, unchanged: z.boolean(), omitted: z.boolean() })
    .nullable(),
  /** Whether the run's sandbox was isolated (lease metadata); null when unknown (no lease yet). */
  isolated: z.boolean().nullable(),
  /** When not isolated: why, as the worker found it on its host (isolation.json); null when unknown. */
  isolationReason: z.string().nullable(),
});

/**
 * The run page's "Workspace" section (runs:read: the plain file view, no operator diagnostics):
 * the files of the execution workspace as they are now, and the files this run wrote or deleted.
 * Only relative paths and sizes leave the server: never the host path, never a link's target.
 */
export const getRunWorkspace = companyProcedure("runs:read")
  .input(runWorkspaceInput)
  .output(runWorkspaceOutput)
  .query(async ({ ctx, input }) => {
    const run = await ctx.db.heartbeatRun.findFirst({
      where: { id: input.runId, companyId: ctx.companyId },
      select: {
        nativeIssue: { select: { executionWorkspace: { select: { name: true, hostPath: true, excludedPaths: true } } } },
        leases: {
          where: { companyId: ctx.companyId },
          orderBy: [{ acquiredAt: "desc" }, { id: "desc" }],
          take: 1,
          select: {
            metadata: true,
            executionWorkspace: { select: { name: true, hostPath: true, excludedPaths: true } },
          },
        },
        workspaceOperations: {
          where: { companyId: ctx.companyId, phase: "workspace_finalize", status: "succeeded" },
          orderBy: [{ finishedAt: "desc" }, { id: "desc" }],
          take: 1,
          select: { metadata: true },
        },
      },
    });
    if (!run) throw notFound("The run");
    const lease = run.leases[0];
    // The workspace the run's lease was acquired for; before a lease, the task's own.
    const workspace = lease?.executionWorkspace ?? run.nativeIssue.executionWorkspace;
    const listing = workspace
      ? await listWorkspaceFiles(workspace.hostPath, { excludedPaths: workspace.excludedPaths, limit: DEFAULT_LISTING_LIMIT })
      : null;
    const changes = finalizeChangesOf(run.workspaceOperations[0]?.metadata);
    const read = lease ? readIsolated(lease.metadata) : null;
    const isolated = read?.kind === "present" ? read.value : null;
    return {
      workspace: workspace && listing ? { name: workspace.name, listing } : null,
      changes,
      isolated,
      isolationReason: isolated === false ? await hostIsolationReason() : null,
    };
  });
