// The agent output log: lines split across chunks, batched in order, bounded per run with one
// truncation event, and never failing the run when a write fails. A recording stand-in for the
// database (no database in unit tests).
import { describe, expect, it } from "vitest";
import type { PrismaClient } from "@copyback/db";
import { AgentOutputRecorder, DEFAULT_OUTPUT_LIMITS, type OutputLimits } from "../../src/dispatch/agent-output";
import type { DispatchLog } from "../../src/dispatch/dispatch-log";

interface Row {
  code: string;
  message: string;
  level: string;
  payload: { stream?: string; seq?: number };
  createdAt?: Date;
}

function recordingDb(options: { failFirst?: boolean } = {}) {
  const rows: Row[] = [];
  const batches: number[] = [];
  let failures = options.failFirst ? 1 : 0;
  const db = {
    runEvent: {
      createMany: async ({ data }: { data: Row[] }) => {
        if (failures > 0) {
          failures -= 1;
          throw new Error("database down");
        }
        batches.push(data.length);
        rows.push(...data);
        return { count: data.length };
      },
      create: async ({ data }: { data: Row }) => {
        rows.push(data);
        return data;
      },
    },
  } as unknown as PrismaClient;
  return { db, rows, batches };
}

const warnings: unknown[] = [];
const log: DispatchLog = { info: () => undefined, warn: (fields) => warnings.push(fields), error: () => undefined };
const run = { companyId: "c", runId: "r" };
const limits = (patch: Partial<OutputLimits>): OutputLimits => ({ ...DEFAULT_OUTPUT_LIMITS, batchDelayMs: 5, ...patch });

describe("AgentOutputRecorder", () => {
  it("joins lines split across chunks, keeps streams apart and flushes the last partial line", async () => {
    const { db, rows } = recordingDb();
    const recorder = new AgentOutputRecorder(db, run, log, limits({}));
    recorder.started();
    recorder.write("stdout", "hel");
    recorder.write("stderr", "oops\r\n");
    recorder.write("stdout", "lo\nwor");
    recorder.write("stdout", "ld");
    expect(await recorder.close()).toEqual({ lines: 3, bytes: 14, truncated: false, droppedLines: 0 });
    expect(rows.map((r) => [r.payload.stream, r.message])).toEqual([
      ["stderr", "oops"],
      ["stdout", "hello"],
      ["stdout", "world"],
    ]);
    // Strictly increasing timestamps keep the order on the run page.
    const times = rows.map((r) => r.createdAt?.getTime() ?? 0);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(times).size).toBe(times.length);
  });

  it("writes in batches of at most batchLines", async () => {
    const { db, batches, rows } = recordingDb();
    const recorder = new AgentOutputRecorder(db, run, log, limits({ batchLines: 10 }));
    recorder.write("stdout", Array.from({ length: 25 }, (_, i) => `line ${i}\n`).join(""));
    await recorder.close();
    expect(batches).toEqual([10, 10, 5]);
    expect(rows.map((r) => r.payload.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
  });

  it("stops at the line budget with one agent.output_truncated event and counts what it dropped", async () => {
    const { db, rows } = recordingDb();
    const recorder = new AgentOutputRecorder(db, run, log, limits({ maxEvents: 5 }));
    recorder.write("stdout", Array.from({ length: 12 }, (_, i) => `l${i}\n`).join(""));
    expect(await recorder.close()).toMatchObject({ lines: 5, truncated: true, droppedLines: 7 });
    expect(rows.filter((r) => r.code === "agent.output")).toHaveLength(5);
    expect(rows.filter((r) => r.code === "agent.output_truncated")).toHaveLength(1);
    expect(rows.at(-1)?.code).toBe("agent.output_truncated");
  });

  it("stops at the byte budget and cuts an overlong line", async () => {
    const { db, rows } = recordingDb();
    const recorder = new AgentOutputRecorder(db, run, log, limits({ maxBytes: 100, maxLineBytes: 40 }));
    recorder.write("stdout", `${"x".repeat(200)}\n${"y".repeat(30)}\n${"z".repeat(30)}\n${"w".repeat(30)}\n`);
    const summary = await recorder.close();
    expect(summary.truncated).toBe(true);
    expect(summary.bytes).toBeLessThanOrEqual(100);
    expect(rows[0]?.message).toMatch(/^x+ \[line cut\]$/);
    expect(rows.filter((r) => r.code === "agent.output_truncated")).toHaveLength(1);
  });

  it("holds output that arrives before the process is reported, and orders it after agent.started", async () => {
    const { db, rows } = recordingDb();
    const recorder = new AgentOutputRecorder(db, run, log, limits({ batchLines: 2, maxEvents: 3 }));
    recorder.write("stdout", "early 1\nearly 2\nearly 3\n");
    await new Promise((resolve) => setTimeout(resolve, 20)); // past batchDelayMs: still nothing written
    expect(rows).toEqual([]);
    recorder.write("stdout", "over budget\n");
    expect(rows).toEqual([]);
    const startedAt = recorder.started();
    await recorder.close();
    expect(rows.map((r) => r.code)).toEqual(["agent.output", "agent.output", "agent.output", "agent.output_truncated"]);
    const times = rows.map((r) => r.createdAt?.getTime() ?? 0);
    expect(Math.min(...times)).toBeGreaterThan(startedAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("a failed write is logged and dropped; later lines are still written", async () => {
    const { db, rows } = recordingDb({ failFirst: true });
    const recorder = new AgentOutputRecorder(db, run, log, limits({ batchLines: 1 }));
    recorder.write("stdout", "lost\nkept\n");
    await recorder.close();
    expect(rows.map((r) => r.message)).toEqual(["kept"]);
    expect(warnings.length).toBeGreaterThan(0);
  });
});
