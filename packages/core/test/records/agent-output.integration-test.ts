// The agent's own output as the run page and the download read it, on a real PostgreSQL: lines
// written by the dispatch recorder come back in order with their stream, the tail is the latest
// lines with the total, the download pages through every line (one stream or both), the budget's
// truncation is reported, another run's lines never mix in, and a row that is not the writer's
// shape is skipped rather than shown under a guessed stream.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { AgentOutputRecorder, DEFAULT_OUTPUT_LIMITS } from "../../src/dispatch/agent-output";
import type { DispatchLog } from "../../src/dispatch/dispatch-log";
import { readAgentOutputTail, readAgentOutputTruncation, readAllAgentOutput } from "../../src/records/agent-output";

const db = useTestDatabase();
const prisma = () => db.prisma();
const log: DispatchLog = { info: () => undefined, warn: () => undefined, error: () => undefined };
let place: { companyId: string; agentId: string; issueId: string };

beforeAll(async () => {
  const company = await prisma().company.create({ data: { name: "Output", issuePrefix: "OUT" } });
  const agent = await prisma().agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"] } });
  const issue = await prisma().issue.create({ data: { companyId: company.id, number: 1, identifier: "OUT-1", title: "Task", status: "in_progress" } });
  place = { companyId: company.id, agentId: agent.id, issueId: issue.id };
});

async function newRun() {
  const run = await prisma().heartbeatRun.create({ data: { companyId: place.companyId, agentId: place.agentId, nativeIssueId: place.issueId, status: "running" } });
  return { companyId: place.companyId, runId: run.id };
}

async function record(run: { companyId: string; runId: string }, chunks: [("stdout" | "stderr"), string][], limits = DEFAULT_OUTPUT_LIMITS) {
  const recorder = new AgentOutputRecorder(prisma(), run, log, { ...limits, batchDelayMs: 5 });
  recorder.started();
  for (const [stream, chunk] of chunks) recorder.write(stream, chunk);
  return recorder.close();
}

async function collect<T>(lines: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const line of lines) out.push(line);
  return out;
}

describe("agent output record", () => {
  it("reads back what the recorder wrote: the tail, the total and every line in pages, apart from another run's", async () => {
    const run = await newRun();
    const other = await newRun();
    await record(other, [["stdout", "not mine\n"]]);
    const chunks: [("stdout" | "stderr"), string][] = [];
    for (let i = 1; i <= 30; i += 1) chunks.push([i % 5 === 0 ? "stderr" : "stdout", `line ${i}\n`]);
    await record(run, chunks);
    await prisma().runEvent.create({ data: { ...run, level: "info", code: "run.started", message: "a controller entry" } });

    const tail = await readAgentOutputTail(prisma(), run, 7);
    expect(tail.totalLines).toBe(30);
    expect(tail.truncation).toBeNull();
    expect(tail.lines.map((l) => l.text)).toEqual(Array.from({ length: 7 }, (_, i) => `line ${24 + i}`));
    expect(tail.lines.find((l) => l.text === "line 25")?.stream).toBe("stderr");

    const all = await collect(readAllAgentOutput(prisma(), run, { pageSize: 4 }));
    expect(all.map((l) => l.text)).toEqual(Array.from({ length: 30 }, (_, i) => `line ${i + 1}`));
    expect(all.map((l) => l.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const errors = await collect(readAllAgentOutput(prisma(), run, { stream: "stderr", pageSize: 4 }));
    expect(errors.map((l) => l.text)).toEqual(["line 5", "line 10", "line 15", "line 20", "line 25", "line 30"]);
  });

  it("reports the budget's truncation with what was kept", async () => {
    const run = await newRun();
    const summary = await record(run, [["stdout", "a\nb\nc\nd\ne\n"]], { ...DEFAULT_OUTPUT_LIMITS, maxEvents: 3 });
    expect(summary.truncated).toBe(true);
    const tail = await readAgentOutputTail(prisma(), run, 500);
    expect(tail.lines.map((l) => l.text)).toEqual(["a", "b", "c"]);
    expect(tail.truncation).toEqual({ maxEvents: 3, maxBytes: DEFAULT_OUTPUT_LIMITS.maxBytes, recordedLines: 3, recordedBytes: 3 });
    expect(await readAgentOutputTruncation(prisma(), await newRun())).toBeNull();
  });

  it("skips a row whose payload is not the writer's shape instead of guessing its stream", async () => {
    const run = await newRun();
    await record(run, [["stdout", "kept\n"]]);
    await prisma().runEvent.create({ data: { ...run, level: "info", code: "agent.output", message: "odd", payload: { stream: "stdin" } } });
    const tail = await readAgentOutputTail(prisma(), run, 500);
    expect(tail.lines.map((l) => l.text)).toEqual(["kept"]);
    expect((await collect(readAllAgentOutput(prisma(), run))).map((l) => l.text)).toEqual(["kept"]);
  });
});
