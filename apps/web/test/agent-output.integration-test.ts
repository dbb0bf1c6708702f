// The agent's own output for people (issue 21, "What users see"): runs.agentOutput gives the run
// page the latest lines with their stream and the total, runs.get's run log no longer carries
// them, and GET /api/runs/:id/agent-output downloads every kept line (both streams with stderr
// marked, or one stream as written), says when the budget cut it, refuses a bad `stream` with 422
// and reads another company's run as not found.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { GET as getAgentOutput } from "~/app/api/runs/[id]/agent-output/route";
import { bearer, buildAuthWorld, callerFor, configureWebApp, disconnectWebApp, insertBoardKey, request, sessionPrincipal, type AuthWorld } from "./auth-fixture";

const testDb = useTestDatabase();
let world: AuthWorld;
let runId = "";

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(testDb.prisma());
  const db = testDb.prisma();
  const run = await db.heartbeatRun.create({ data: { companyId: world.companyA.id, agentId: world.a.agent.id, nativeIssueId: world.a.issue.id, status: "succeeded", runtimeMode: "native" } });
  runId = run.id;
  const base = Date.now() - 10_000;
  const at = (i: number) => new Date(base + i);
  await db.runEvent.create({ data: { companyId: world.companyA.id, runId, level: "info", code: "agent.started", message: "started", createdAt: at(0) } });
  await db.runEvent.createMany({
    data: Array.from({ length: 600 }, (_, i) => ({
      companyId: world.companyA.id,
      runId,
      level: "info" as const,
      code: "agent.output",
      message: i % 100 === 99 ? `warning ${i + 1}` : `line ${i + 1}`,
      payload: { stream: i % 100 === 99 ? "stderr" : "stdout", seq: i + 1 },
      createdAt: at(i + 1),
    })),
  });
  await db.runEvent.create({
    data: { companyId: world.companyA.id, runId, level: "warn", code: "agent.output_truncated", message: "cut", payload: { maxEvents: 600, maxBytes: 1_048_576, recordedLines: 600, recordedBytes: 5_000 }, createdAt: at(601) },
  });
  await db.runEvent.create({ data: { companyId: world.companyA.id, runId, level: "info", code: "result.accepted", message: "accepted", createdAt: at(602) } });
});
afterAll(disconnectWebApp);

const member = () => callerFor(testDb.prisma(), sessionPrincipal(world.users.member.id, [{ companyId: world.companyA.id, role: "member" }]));

async function download(query = "", id = runId) {
  const key = await insertBoardKey(testDb.prisma(), world.companyA.id, world.users.member.id);
  return getAgentOutput(request({ path: `/api/runs/${id}/agent-output${query}`, headers: bearer(key.secret) }), { params: Promise.resolve({ id }) });
}

describe("the agent's output", () => {
  it("runs.agentOutput: the latest 500 lines with their stream, the total and the truncation", async () => {
    const output = await member().runs.agentOutput({ companyId: world.companyA.id, runId });
    expect(output.totalLines).toBe(600);
    expect(output.lines).toHaveLength(500);
    expect(output.lines[0]).toMatchObject({ seq: 101, text: "line 101", stream: "stdout" });
    expect(output.lines.at(-1)).toMatchObject({ seq: 600, text: "warning 600", stream: "stderr" });
    expect(output.truncation).toMatchObject({ maxEvents: 600, recordedLines: 600 });
  });

  it("runs.get: the controller's run log without the agent's lines", async () => {
    const run = await member().runs.get({ companyId: world.companyA.id, runId });
    expect(run.events.map((e) => e.code)).toEqual(["agent.started", "result.accepted"]);
    expect(run.eventsTruncated).toBe(false);
  });

  it("downloads every kept line, stderr marked, with the truncation said last", async () => {
    const response = await download();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(response.headers.get("content-disposition")).toBe(`attachment; filename="run-${runId}-output.txt"`);
    expect(response.headers.get("x-copyback-output-truncated")).toBe("true");
    const lines = (await response.text()).split("\n");
    expect(lines).toHaveLength(602);
    expect(lines[0]).toBe("line 1");
    expect(lines[99]).toBe("[stderr] warning 100");
    expect(lines[599]).toBe("[stderr] warning 600");
    expect(lines[600]).toMatch(/^\[copyback\] The agent's output passed this run's budget \(600 lines/);
    expect(lines[601]).toBe("");
  });

  it("downloads one stream as the agent wrote it", async () => {
    const stderr = await (await download("?stream=stderr")).text();
    expect(stderr).toBe(Array.from({ length: 6 }, (_, i) => `warning ${(i + 1) * 100}\n`).join(""));
    const stdout = (await (await download("?stream=stdout")).text()).split("\n");
    expect(stdout).toHaveLength(595);
    expect(stdout.some((l) => l.includes("warning"))).toBe(false);
  });

  it("refuses a stream that is neither stdout nor stderr, and another company's run reads as not found", async () => {
    const bad = await download("?stream=stdin");
    expect(bad.status).toBe(422);
    expect(await bad.json()).toMatchObject({ code: "invalid_request" });
    const foreign = await download("", world.b.run.id);
    expect(foreign.status).toBe(404);
  });
});
