// POST /api/runs/:id/finish through its real route handler against a real database: the agent's
// result is published (accepted, idempotent, or stored as rejected), refused for another agent and
// for a run that accepts no result, and a body that is no submission changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { POST as finishRun } from "~/app/api/runs/[id]/finish/route";
import {
  bearer,
  buildAuthWorld,
  configureWebApp,
  disconnectWebApp,
  insertAgentKey,
  insertBoardKey,
  json,
  request,
  type AuthWorld,
} from "./auth-fixture";

const testDb = useTestDatabase();
const db = () => testDb.prisma();
let world: AuthWorld;
let agentKey: string;
let number = 100;

beforeAll(async () => {
  configureWebApp(testDb.url(), "authenticated");
  world = await buildAuthWorld(db());
  agentKey = (await insertAgentKey(db(), world.companyA.id, world.a.agent.id)).secret;
});
afterAll(disconnectWebApp);

const document = (summary = "Wrote notes/builder.log.") => ({
  schema: "copyback.run-result.v1",
  outcome: "in_review",
  summary,
});

/** A claimed run of company A's agent: running, its coordinator observed (waiting for a result). */
async function runningRun(status: "running" | "cancelled" = "running") {
  const n = ++number;
  const issue = await db().issue.create({
    data: { companyId: world.companyA.id, number: n, identifier: `ACME-${n}`, title: `Finish ${n}`, status: "in_progress" },
  });
  const run = await db().heartbeatRun.create({
    data: {
      companyId: world.companyA.id,
      agentId: world.a.agent.id,
      nativeIssueId: issue.id,
      status,
      runtimeMode: "native",
      startedAt: new Date(),
      ...(status === "cancelled" ? { finishedAt: new Date() } : {}),
    },
  });
  await db().nativeRunFinalization.create({ data: { companyId: world.companyA.id, runId: run.id, issueId: issue.id, phase: "observed" } });
  return run;
}

function finish(runId: string, body: unknown, key = agentKey) {
  return finishRun(request({ path: `/api/runs/${runId}/finish`, body, headers: bearer(key) }), { params: Promise.resolve({ id: runId }) });
}

function finishRaw(runId: string, rawBody: string) {
  return finishRun(request({ method: "POST", path: `/api/runs/${runId}/finish`, rawBody, headers: bearer(agentKey) }), {
    params: Promise.resolve({ id: runId }),
  });
}

/** Everything a finish could have changed about a run. */
async function snapshot(runId: string) {
  const [run, coordinator, results, events] = await Promise.all([
    db().heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { status: true, resultJson: true, nativePhase: true } }),
    db().nativeRunFinalization.findUniqueOrThrow({ where: { runId }, select: { phase: true, resultId: true } }),
    db().nativeRunResult.findMany({ where: { runId }, select: { id: true, schemaStatus: true } }),
    db().runEvent.count({ where: { runId } }),
  ]);
  return { run, coordinator, results, events };
}

describe("POST /api/runs/:id/finish", () => {
  it("R-ORP-2 publishes the run's own agent's result as accepted, with the run and its coordinator updated", async () => {
    const run = await runningRun();
    const response = await finish(run.id, { dedupeKey: "turn-1", result: document() });
    expect(response.status).toBe(200);
    const body = await json(response);
    expect(body).toEqual({ status: "accepted", resultId: expect.any(String), duplicate: false });

    const after = await snapshot(run.id);
    expect(after.results).toEqual([{ id: body.resultId, schemaStatus: "accepted" }]);
    expect(after.coordinator).toEqual({ phase: "result_accepted", resultId: body.resultId });
    expect(after.run.resultJson).toMatchObject({ resultId: body.resultId, outcome: "in_review" });
    // The run itself stays running: finalization, not the finish call, ends it.
    expect(after.run.status).toBe("running");
  });

  it("answers a repeated finish with the same result id (duplicate: true) and stores nothing more", async () => {
    const run = await runningRun();
    const first = await json(await finish(run.id, { dedupeKey: "turn-1", result: document() }));
    const before = await snapshot(run.id);

    // The same document with its keys in another order is the same document (canonical sha256).
    const again = await finish(run.id, { dedupeKey: "turn-1", result: { summary: "Wrote notes/builder.log.", outcome: "in_review", schema: "copyback.run-result.v1" } });
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual({ status: "accepted", resultId: first.resultId, duplicate: true });
    expect(await snapshot(run.id)).toEqual(before);
  });

  it("refuses a second, different result once one is accepted (409 result_already_accepted)", async () => {
    const run = await runningRun();
    await finish(run.id, { dedupeKey: "turn-1", result: document() });
    const before = await snapshot(run.id);
    const response = await finish(run.id, { dedupeKey: "turn-2", result: document("Something else.") });
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "result_already_accepted" });
    expect(await snapshot(run.id)).toEqual(before);
  });

  it("stores a document that fails the result schema as rejected and answers 422 with its code", async () => {
    const run = await runningRun();
    const response = await finish(run.id, { dedupeKey: "turn-1", result: { schema: "copyback.run-result.v1", outcome: "shipped", summary: "" } });
    expect(response.status).toBe(422);
    const body = await json(response);
    expect(body).toMatchObject({ status: "rejected", code: "result_schema_invalid", resultId: expect.any(String), duplicate: false });

    const after = await snapshot(run.id);
    expect(after.results).toEqual([{ id: body.resultId, schemaStatus: "rejected" }]);
    // Nothing was accepted: the coordinator still waits, and a valid result may still come.
    expect(after.coordinator).toEqual({ phase: "observed", resultId: null });
    expect((await finish(run.id, { dedupeKey: "turn-2", result: document() })).status).toBe(200);
  });

  it("refuses a finish from another agent's key (403 not_run_agent) and stores nothing", async () => {
    const run = await runningRun();
    const before = await snapshot(run.id);
    const other = await insertAgentKey(db(), world.companyA.id, world.secondAgentA.id);
    const response = await finish(run.id, { dedupeKey: "turn-1", result: document() }, other.secret);
    expect(response.status).toBe(403);
    expect(await json(response)).toMatchObject({ code: "not_run_agent" });
    expect(await snapshot(run.id)).toEqual(before);
  });

  it("reads a run of another company as not found for an agent key, and refuses board keys", async () => {
    const run = await runningRun();
    const foreign = await insertAgentKey(db(), world.companyB.id, world.b.agent.id);
    expect((await finish(run.id, { dedupeKey: "turn-1", result: document() }, foreign.secret)).status).toBe(404);
    const owner = await insertBoardKey(db(), world.companyA.id, world.users.owner.id);
    expect((await finish(run.id, { dedupeKey: "turn-1", result: document() }, owner.secret)).status).toBe(403);
    expect((await snapshot(run.id)).results).toEqual([]);
  });

  it("refuses a result for a cancelled run (409 run_not_accepting_results) and stores nothing", async () => {
    const run = await runningRun("cancelled");
    const before = await snapshot(run.id);
    const response = await finish(run.id, { dedupeKey: "turn-1", result: document() });
    expect(response.status).toBe(409);
    expect(await json(response)).toMatchObject({ code: "run_not_accepting_results" });
    expect(await snapshot(run.id)).toEqual(before);
  });

  it("answers a body that is no submission with 400 invalid_request and changes nothing", async () => {
    const run = await runningRun();
    const before = await snapshot(run.id);
    const bodies: Array<[string, () => Promise<Response>]> = [
      ["malformed JSON", () => finishRaw(run.id, "{not json")],
      ["an empty body", () => finishRaw(run.id, "")],
      ["no dedupe key", () => finish(run.id, { result: document() })],
      ["a blank dedupe key", () => finish(run.id, { dedupeKey: "  ", result: document() })],
      ["a result that is not an object", () => finish(run.id, { dedupeKey: "turn-1", result: "done" })],
      ["an unknown field", () => finish(run.id, { dedupeKey: "turn-1", result: document(), extra: true })],
    ];
    for (const [name, send] of bodies) {
      const response = await send();
      expect(response.status, name).toBe(400);
      expect(await json(response), name).toMatchObject({ code: "invalid_request" });
    }
    expect(await snapshot(run.id)).toEqual(before);
  });
});
