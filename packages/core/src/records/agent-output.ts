// The agent's own output (stdout and stderr) as it is kept with the run: `run_events` rows of code
// `agent.output`, one per line, with `{ stream, seq }` in the payload, and at most one
// `agent.output_truncated` row once the per-run budget is spent (dispatch/agent-output.ts batches
// and bounds the writes). This file is the record's one schema: the writer's row shape and the
// readers the run page (the latest lines) and the download (every line, in pages) use.
import { z } from "zod";
import type { Prisma, PrismaClient, TransactionClient } from "@copyback/db/client";

type Db = PrismaClient | TransactionClient;

export const AGENT_OUTPUT_CODE = "agent.output";
export const AGENT_OUTPUT_TRUNCATED_CODE = "agent.output_truncated";
export const AGENT_OUTPUT_CODES = [AGENT_OUTPUT_CODE, AGENT_OUTPUT_TRUNCATED_CODE] as const;

export type AgentOutputStream = "stdout" | "stderr";

const linePayloadSchema = z.object({ stream: z.enum(["stdout", "stderr"]), seq: z.number().int().positive() });
const truncatedPayloadSchema = z.object({
  maxEvents: z.number().int().nonnegative(),
  maxBytes: z.number().int().nonnegative(),
  recordedLines: z.number().int().nonnegative(),
  recordedBytes: z.number().int().nonnegative(),
});
export type AgentOutputTruncation = z.infer<typeof truncatedPayloadSchema>;

export interface AgentOutputLine {
  seq: number;
  stream: AgentOutputStream;
  text: string;
  at: Date;
}

interface RunRef {
  companyId: string;
  runId: string;
}

/** The row of one output line (the writer batches these into one INSERT). */
export function agentOutputLineRow(run: RunRef, line: AgentOutputLine): Prisma.RunEventCreateManyInput {
  return {
    ...run,
    level: "info",
    code: AGENT_OUTPUT_CODE,
    message: line.text,
    payload: { stream: line.stream, seq: line.seq },
    createdAt: line.at,
  };
}

/** The row that says the budget was spent and the rest was not kept. */
export function agentOutputTruncatedRow(run: RunRef, truncation: AgentOutputTruncation, at: Date): Prisma.RunEventCreateManyInput {
  return {
    ...run,
    level: "warn",
    code: AGENT_OUTPUT_TRUNCATED_CODE,
    message: `The agent's output passed this run's log budget (${truncation.maxEvents} lines or ${truncation.maxBytes} bytes); the rest is not recorded.`,
    payload: truncation,
    createdAt: at,
  };
}

const lineSelect = { id: true, message: true, payload: true, createdAt: true } as const;

function lineOf(row: { message: string; payload: unknown; createdAt: Date }): AgentOutputLine | null {
  // A row whose payload is not the writer's shape (written by hand, an older build) is skipped
  // rather than shown under a guessed stream.
  const payload = linePayloadSchema.safeParse(row.payload);
  return payload.success ? { seq: payload.data.seq, stream: payload.data.stream, text: row.message, at: row.createdAt } : null;
}

/** Whether (and how) the run's output was cut short; null when every line was kept. */
export async function readAgentOutputTruncation(db: Db, run: RunRef): Promise<AgentOutputTruncation | null> {
  const row = await db.runEvent.findFirst({
    where: { ...run, code: AGENT_OUTPUT_TRUNCATED_CODE },
    select: { payload: true },
  });
  if (!row) return null;
  const parsed = truncatedPayloadSchema.safeParse(row.payload);
  // The row's presence is the fact; a payload that does not parse still means "cut short".
  return parsed.success ? parsed.data : { maxEvents: 0, maxBytes: 0, recordedLines: 0, recordedBytes: 0 };
}

export interface AgentOutputTail {
  /** The latest `limit` lines, oldest first. */
  lines: AgentOutputLine[];
  /** Every line kept for the run (the download has them all). */
  totalLines: number;
  /** Set when the agent wrote more than the run's budget keeps. */
  truncation: AgentOutputTruncation | null;
}

/** The run page's view: the latest lines, how many there are in all, and whether any were cut. */
export async function readAgentOutputTail(db: Db, run: RunRef, limit: number): Promise<AgentOutputTail> {
  const [rows, totalLines, truncation] = await Promise.all([
    db.runEvent.findMany({
      where: { ...run, code: AGENT_OUTPUT_CODE },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: limit,
      select: lineSelect,
    }),
    db.runEvent.count({ where: { ...run, code: AGENT_OUTPUT_CODE } }),
    readAgentOutputTruncation(db, run),
  ]);
  const lines = rows.reverse().flatMap((row) => lineOf(row) ?? []);
  return { lines, totalLines, truncation };
}

/**
 * Every kept line, oldest first, a page at a time (keyset on created_at and id), so a download
 * never holds more than one page. `stream` keeps one of the two.
 */
export async function* readAllAgentOutput(db: Db, run: RunRef, options: { stream?: AgentOutputStream; pageSize?: number } = {}): AsyncGenerator<AgentOutputLine> {
  const pageSize = options.pageSize ?? 500;
  let after: { createdAt: Date; id: string } | null = null;
  for (;;) {
    const rows: { id: string; message: string; payload: unknown; createdAt: Date }[] = await db.runEvent.findMany({
      where: {
        ...run,
        code: AGENT_OUTPUT_CODE,
        ...(after ? { OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }] } : {}),
      },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      take: pageSize,
      select: lineSelect,
    });
    for (const row of rows) {
      const line = lineOf(row);
      if (line && (options.stream === undefined || line.stream === options.stream)) yield line;
    }
    if (rows.length < pageSize) break;
    const last = rows[rows.length - 1]!;
    after = { createdAt: last.createdAt, id: last.id };
  }
}
