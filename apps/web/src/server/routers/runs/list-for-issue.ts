import { z } from "zod";
import { readRunHostWaits } from "@copyback/core/deployment";
import { companyProcedure } from "~/server/trpc";
import { readIssueInCompany } from "../issues/load-issue";
import { hostWaitSchema, runStatusSchema, runtimeModeSchema } from "./run-fields";

export const listRunsForIssueInput = z.object({ issueId: z.uuid() });

const MAX_RUNS = 100;

export const issueRunItem = z.object({
  id: z.uuid(),
  status: runStatusSchema,
  runtimeMode: runtimeModeSchema,
  agent: z.object({ id: z.uuid(), name: z.string() }),
  createdAt: z.date(),
  startedAt: z.date().nullable(),
  finishedAt: z.date().nullable(),
  /** Issue 23: a queued run waiting for its workspace's host to have a serving worker, or a running run whose host's worker is gone; else null. */
  waiting: hostWaitSchema.nullable(),
});

export const listRunsForIssueOutput = z.object({
  runs: z.array(issueRunItem),
  truncated: z.boolean(),
});

/** The runs of one task (heartbeat_runs.native_issue_id), newest first. */
export const listRunsForIssue = companyProcedure("runs:read")
  .input(listRunsForIssueInput)
  .output(listRunsForIssueOutput)
  .query(async ({ ctx, input }) => {
    await readIssueInCompany(ctx, input.issueId);
    // Served by the (company_id, native_issue_id) index.
    const rows = await ctx.db.heartbeatRun.findMany({
      where: { companyId: ctx.companyId, nativeIssueId: input.issueId },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: MAX_RUNS + 1,
      select: {
        id: true,
        status: true,
        runtimeMode: true,
        createdAt: true,
        startedAt: true,
        finishedAt: true,
        agent: { select: { id: true, name: true } },
      },
    });
    const runs = rows.slice(0, MAX_RUNS);
    const waits = await readRunHostWaits(ctx.db, runs.filter((run) => run.status === "queued" || run.status === "running").map((run) => run.id));
    return { runs: runs.map((run) => ({ ...run, waiting: waits.get(run.id) ?? null })), truncated: rows.length > MAX_RUNS };
  });
