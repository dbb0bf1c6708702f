import { z } from "zod";
import { readRunHostWait } from "@copyback/core/deployment";
import { runResultDocument } from "@copyback/core/records";
import { companyProcedure } from "~/server/trpc";
import { readIssueInCompany } from "../issues/load-issue";
import { hostWaitSchema, runStatusSchema } from "./run-fields";

export const latestRunForIssueInput = z.object({ issueId: z.uuid() });

export const latestRunForIssueOutput = z.object({
  run: z
    .object({
      id: z.uuid(),
      status: runStatusSchema,
      agent: z.object({ id: z.uuid(), name: z.string() }),
      createdAt: z.date(),
      startedAt: z.date().nullable(),
      finishedAt: z.date().nullable(),
      /** A stable code only (messages may carry host details). */
      errorCode: z.string().nullable(),
      /** Issue 23: a queued run whose workspace's host has no serving worker says so ("Waiting for the worker on HOST"); a running one whose host has no live worker says it stopped. */
      waiting: hostWaitSchema.nullable(),
    })
    .nullable(),
  /** The run's accepted result once it has one: what the agent says it did. */
  result: z
    .object({
      outcome: z.enum(["in_review", "done", "blocked"]),
      summary: z.string(),
      acceptedAt: z.date(),
    })
    .nullable(),
});

/**
 * The issue page's agent panel: the task's latest run (its chip) and, once the agent's result is
 * accepted, its outcome and summary. Live through heartbeat_runs notifications: publishing a
 * result updates the run row in the same transaction (R-ORP-2), which invalidates this query.
 */
export const getLatestRunForIssue = companyProcedure("runs:read")
  .input(latestRunForIssueInput)
  .output(latestRunForIssueOutput)
  .query(async ({ ctx, input }) => {
    await readIssueInCompany(ctx, input.issueId);
    const run = await ctx.db.heartbeatRun.findFirst({
      where: { companyId: ctx.companyId, nativeIssueId: input.issueId },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: {
        id: true,
        status: true,
        createdAt: true,
        startedAt: true,
        finishedAt: true,
        errorCode: true,
        agent: { select: { id: true, name: true } },
        results: {
          where: { schemaStatus: "accepted" },
          orderBy: [{ createdAt: "asc" }, { id: "asc" }],
          take: 1,
          select: { payload: true, createdAt: true },
        },
      },
    });
    if (!run) return { run: null, result: null };
    const { results, ...rest } = run;
    const waiting = run.status === "queued" || run.status === "running" ? await readRunHostWait(ctx.db, run.id) : null;
    return { run: { ...rest, waiting }, result: acceptedResultOf(results[0]) };
  });

/** An accepted row's document, re-read through the one result schema (JSON from the database). */
function acceptedResultOf(row: { payload: unknown; createdAt: Date } | undefined) {
  if (!row) return null;
  const parsed = runResultDocument.safeParse(row.payload);
  if (!parsed.success) return null;
  return { outcome: parsed.data.outcome, summary: parsed.data.summary, acceptedAt: row.createdAt };
}
