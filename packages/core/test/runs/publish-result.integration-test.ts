// publishRunResult against a real PostgreSQL: R-ORP-2 (heartbeat locked and updated in the
// acceptance transaction), idempotency by dedupe key, refusals that change nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { publishRunResult } from "../../src/runs/publish-result";
import { failRun } from "../../src/runs/settle-run";
import { wakeAgent } from "../../src/runs/wake-agent";
import { buildCompany, resultDoc, runningRun, USER_ACTOR, type Company } from "./runs-fixture";

const db = useTestDatabase();
let world: Company;

beforeAll(async () => {
  world = await buildCompany(db.prisma());
});

const publish = (runId: string, agentId: string, dedupeKey: string, document: unknown) =>
  publishRunResult(db.prisma(), { runId, agentId, dedupeKey, document, source: "finish_api" });

async function counts(runId: string) {
  const prisma = db.prisma();
  return {
    results: await prisma.nativeRunResult.count({ where: { runId } }),
    events: await prisma.runEvent.count({ where: { runId, code: { startsWith: "result." } } }),
    run: await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId }, select: { resultJson: true, nativePhase: true, status: true } }),
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId }, select: { phase: true, resultId: true } }),
  };
}

describe("publishRunResult", () => {
  it("R-ORP-2 locks and updates the heartbeat in the acceptance transaction (same xmin as the result row)", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    const [before] = await db.prisma().$queryRaw<Array<{ xmin: string }>>`SELECT xmin::text FROM heartbeat_runs WHERE id = ${runId}::uuid`;
    const outcome = await publish(runId, world.agent.id, "finish-1", resultDoc("done"));
    expect(outcome).toMatchObject({ kind: "accepted", duplicate: false });
    if (outcome.kind !== "accepted") throw new Error("unreachable");

    const [heartbeat] = await db.prisma().$queryRaw<Array<{ xmin: string }>>`SELECT xmin::text FROM heartbeat_runs WHERE id = ${runId}::uuid`;
    const [result] = await db.prisma().$queryRaw<Array<{ xmin: string }>>`SELECT xmin::text FROM native_run_results WHERE id = ${outcome.resultId}::uuid`;
    const [coordinator] = await db.prisma().$queryRaw<Array<{ xmin: string }>>`SELECT xmin::text FROM native_run_finalizations WHERE run_id = ${runId}::uuid`;
    expect(heartbeat!.xmin).not.toBe(before!.xmin);
    expect(heartbeat!.xmin).toBe(result!.xmin);
    expect(coordinator!.xmin).toBe(result!.xmin);

    const state = await counts(runId);
    expect(state.coordinator).toEqual({ phase: "result_accepted", resultId: outcome.resultId });
    expect(state.run.nativePhase).toBe("result_accepted");
    expect(state.run.resultJson).toMatchObject({ resultId: outcome.resultId, outcome: "done", finalizationPhase: "result_accepted" });
    expect(await db.prisma().runEvent.count({ where: { runId, code: "result.accepted" } })).toBe(1);
    const stored = await db.prisma().nativeRunResult.findUniqueOrThrow({ where: { id: outcome.resultId } });
    expect(stored).toMatchObject({ schemaStatus: "accepted", dedupeKey: "finish-1", rejectionCode: null, payload: resultDoc("done") });
    expect(stored.canonicalSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("a duplicate finish call with the same key and document returns the stored row (duplicate: true), in any key order", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    const first = await publish(runId, world.agent.id, "k", resultDoc("in_review", "same"));
    const reordered = { summary: "same", outcome: "in_review", schema: resultDoc().schema };
    const second = await publish(runId, world.agent.id, "k", reordered);
    expect(second).toEqual({ ...first, duplicate: true });
    expect((await counts(runId)).results).toBe(1);
    expect(await db.prisma().runEvent.count({ where: { runId, code: "result.accepted" } })).toBe(1);
  });

  it("the same dedupe key with another document is a conflict (result_dedupe_key_reused) and changes nothing", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    await publish(runId, world.agent.id, "k", resultDoc("in_review"));
    const before = await counts(runId);
    await expect(publish(runId, world.agent.id, "k", resultDoc("done"))).rejects.toMatchObject({ code: "result_dedupe_key_reused" });
    expect(await counts(runId)).toEqual(before);
  });

  it("a second accepted result under another key is refused (result_already_accepted)", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    await publish(runId, world.agent.id, "a", resultDoc("in_review"));
    const before = await counts(runId);
    await expect(publish(runId, world.agent.id, "b", resultDoc("done"))).rejects.toMatchObject({
      kind: "conflict",
      code: "result_already_accepted",
    });
    expect(await counts(runId)).toEqual(before);
  });

  it("an invalid document is stored as rejected with its code, changes no phase, and does not block a later valid one", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    const rejected = await publish(runId, world.agent.id, "bad", { schema: "nope", outcome: "done" });
    expect(rejected).toMatchObject({ kind: "rejected", code: "result_schema_invalid", duplicate: false });
    let state = await counts(runId);
    expect(state.coordinator.phase).toBe("observed");
    expect(state.run.nativePhase).toBe("observed");
    const row = await db.prisma().nativeRunResult.findFirstOrThrow({ where: { runId } });
    expect(row).toMatchObject({ schemaStatus: "rejected", rejectionCode: "result_schema_invalid", payload: { schema: "nope", outcome: "done" } });
    expect(await db.prisma().runEvent.count({ where: { runId, code: "result.rejected", level: "warn" } })).toBe(1);

    // Replaying the rejected submission answers the same way.
    expect(await publish(runId, world.agent.id, "bad", { outcome: "done", schema: "nope" })).toMatchObject({ kind: "rejected", duplicate: true, resultId: rejected.resultId });

    const accepted = await publish(runId, world.agent.id, "good", resultDoc("done"));
    expect(accepted.kind).toBe("accepted");
    state = await counts(runId);
    expect(state.coordinator.phase).toBe("result_accepted");
    expect(state.results).toBe(2);
  });

  it("a document above 256 KiB is stored as rejected (result_too_large) without its body", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    const outcome = await publish(runId, world.agent.id, "big", { ...resultDoc(), notes: "x".repeat(300 * 1024) });
    expect(outcome).toMatchObject({ kind: "rejected", code: "result_too_large" });
    const row = await db.prisma().nativeRunResult.findUniqueOrThrow({ where: { id: outcome.resultId } });
    expect(row.payload).toMatchObject({ omitted: true });
  });

  it("a finish from another agent's key is refused (not_run_agent) and changes nothing", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    const other = await db.prisma().agent.create({ data: { companyId: world.company.id, name: `Other ${runId}`, command: ["/bin/true"] } });
    const before = await counts(runId);
    await expect(publish(runId, other.id, "k", resultDoc())).rejects.toMatchObject({ kind: "forbidden", code: "not_run_agent" });
    expect(await counts(runId)).toEqual(before);
  });

  it("a result for a cancelled run is refused (run_not_accepting_results) and changes nothing", async () => {
    const issue = await world.issue();
    const { runId } = await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() });
    await db.prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "cancelled" } });
    await expect(publish(runId, world.agent.id, "k", resultDoc())).rejects.toMatchObject({ kind: "conflict", code: "run_not_accepting_results" });
    expect(await db.prisma().nativeRunResult.count({ where: { runId } })).toBe(0);
  });

  it.each(["queued", "failed"] as const)("a result for a %s run is refused (run_not_accepting_results)", async (status) => {
    let runId: string;
    if (status === "queued") {
      const issue = await world.issue();
      runId = (await wakeAgent(db.prisma(), { companyId: world.company.id, issueId: issue.id, actor: USER_ACTOR() })).runId;
    } else {
      runId = (await runningRun(db.prisma(), world)).runId;
      await failRun(db.prisma(), { runId, code: "agent_crashed", message: "The agent exited 1." });
    }
    await expect(publish(runId, world.agent.id, "k", resultDoc())).rejects.toMatchObject({ code: "run_not_accepting_results" });
    expect(await db.prisma().nativeRunResult.count({ where: { runId } })).toBe(0);
  });

  it("an unknown run is not_found; a bad dedupe key or a non-JSON document is invalid", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    await expect(publish("00000000-0000-4000-8000-000000000000", world.agent.id, "k", resultDoc())).rejects.toMatchObject({ kind: "not_found" });
    await expect(publish(runId, world.agent.id, "", resultDoc())).rejects.toMatchObject({ code: "dedupe_key_invalid" });
    await expect(publish(runId, world.agent.id, "k", undefined)).rejects.toMatchObject({ code: "result_not_json" });
    expect(await db.prisma().nativeRunResult.count({ where: { runId } })).toBe(0);
  });

  it("concurrent finishes with different keys: exactly one is accepted", async () => {
    const { runId } = await runningRun(db.prisma(), world);
    const settled = await Promise.allSettled(
      ["p1", "p2", "p3", "p4"].map((key) => publish(runId, world.agent.id, key, resultDoc("done", key))),
    );
    const accepted = settled.filter((s) => s.status === "fulfilled");
    expect(accepted).toHaveLength(1);
    for (const s of settled) if (s.status === "rejected") expect(s.reason).toMatchObject({ code: "result_already_accepted" });
    expect(await db.prisma().nativeRunResult.count({ where: { runId, schemaStatus: "accepted" } })).toBe(1);
  });
});
