import { z } from "zod";
import { notFound } from "@copyback/core/errors";
import { AGENT_OUTPUT_CODES } from "@copyback/core/records";
import { companyProcedure } from "~/server/trpc";
import { runStatusSchema, runtimeModeSchema } from "./run-fields";

export const getRunInput = z.object({ runId: z.uuid() });

const MAX_EVENTS = 200;

export const getRunOutput = z.object({
  id: z.uuid(),
  status: runStatusSchema,
  runtimeMode: runtimeModeSchema,
  nativePhase: z.string().nullable(),
  wakeReason: z.string().nullable(),
  /** A stable code only: error messages may carry host details and stay in the run log files. */
  errorCode: z.string().nullable(),
  createdAt: z.date(),
  startedAt: z.date().nullable(),
  finishedAt: z.date().nullable(),
  agent: z.object({ id: z.uuid(), name: z.string() }),
  issue: z.object({ id: z.uuid(), identifier: z.string(), title: z.string() }),
  predecessorRunId: z.uuid().nullable(),
  /** The local run log, oldest first (the newest 200 entries); the agent's own output is apart (runs.agentOutput). */
  events: z.array(
    z.object({
      id: z.uuid(),
      level: z.enum(["debug", "info", "warn", "error"]),
      code: z.string(),
      message: z.string(),
      createdAt: z.date(),
    }),
  ),
  eventsTruncated: z.boolean(),
});

/**
 * The run inspection page's data ("Inspect run" links land there). Controller process ids, hosts
 * and boot ids are deliberately not selected: board users never see them (R-UI-1).
 */
export const getRun = companyProcedure("runs:read")
  .input(getRunInput)
  .output(getRunOutput)
  .query(async ({ ctx, input }) => {
    const run = await ctx.db.heartbeatRun.findFirst({
      where: { id: input.runId, companyId: ctx.companyId },
      select: {
        id: true,
        status: true,
        runtimeMode: true,
        nativePhase: true,
        wakeReason: true,
        errorCode: true,
        createdAt: true,
        startedAt: true,
        finishedAt: true,
        predecessorRunId: true,
        agent: { select: { id: true, name: true } },
        nativeIssue: { select: { id: true, identifier: true, title: true } },
        events: {
          where: { code: { notIn: [...AGENT_OUTPUT_CODES] } },
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
          take: MAX_EVENTS + 1,
          select: { id: true, level: true, code: true, message: true, createdAt: true },
        },
      },
    });
    if (!run) throw notFound("The run");
    const { nativeIssue, events, ...rest } = run;
    return {
      ...rest,
      issue: nativeIssue,
      events: events.slice(0, MAX_EVENTS).reverse(),
      eventsTruncated: events.length > MAX_EVENTS,
    };
  });
