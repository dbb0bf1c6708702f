import { z } from "zod";
import { notFound } from "@copyback/core/errors";
import { readAgentOutputTail } from "@copyback/core/records";
import { companyProcedure } from "~/server/trpc";

export const getAgentOutputInput = z.object({ runId: z.uuid() });

/** The run page shows this many of the latest lines; the download has every kept line. */
export const AGENT_OUTPUT_PAGE_LINES = 500;

export const getAgentOutputOutput = z.object({
  lines: z.array(
    z.object({
      seq: z.number().int(),
      stream: z.enum(["stdout", "stderr"]),
      text: z.string(),
      at: z.date(),
    }),
  ),
  totalLines: z.number().int(),
  truncation: z
    .object({ maxEvents: z.number().int(), maxBytes: z.number().int(), recordedLines: z.number().int(), recordedBytes: z.number().int() })
    .nullable(),
});

/**
 * The agent's own stdout and stderr for the run page (every provider writes them the same way:
 * dispatch/agent-output.ts). Board readers see what the agent did; the controller's own entries
 * stay in the run log.
 */
export const getAgentOutput = companyProcedure("runs:read")
  .input(getAgentOutputInput)
  .output(getAgentOutputOutput)
  .query(async ({ ctx, input }) => {
    const run = await ctx.db.heartbeatRun.findFirst({ where: { id: input.runId, companyId: ctx.companyId }, select: { id: true } });
    if (!run) throw notFound("The run");
    return readAgentOutputTail(ctx.db, { companyId: ctx.companyId, runId: run.id }, AGENT_OUTPUT_PAGE_LINES);
  });
