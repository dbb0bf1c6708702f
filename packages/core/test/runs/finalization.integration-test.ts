// The coordinator's compare-and-set, the status arbiter and how runs settle, against a real
// PostgreSQL: the happy path ends `committed` everywhere R-ATT-5 looks, a committed coordinator
// is never overwritten, a late result never moves a task that is no longer the run's.
import { beforeAll, describe, expect, it } from "vitest";
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { advanceFinalization } from "../../src/records/coordinator";
import { arbitrateRunResult } from "../../src/records/status-arbiter";
import { publishRunResult } from "../../src/runs/publish-result";
import { completeRun, failRun } from "../../src/runs/settle-run";
import { buildCompany, resultDoc, runningRun, type Company } from "./runs-fixture";

const db = useTestDatabase();
let world: Company;

beforeAll(async () => {
  world = await buildCompany(db.prisma());
});

/** A running run with an accepted result of the given outcome. */
async function acceptedRun(outcome: "in_review" | "done" | "blocked" = "in_review") {
  const { issue, runId } = await runningRun(db.prisma(), world);
  const published = await publishRunResult(db.prisma(), { runId, agentId: world.agent.id, dedupeKey: "finish", document: resultDoc(outcome), source: "result_file" });
  if (published.kind !== "accepted") throw new Error("fixture: result not accepted");
  return { issue, runId, resultId: published.resultId };
}

/** What the live finalizer (H3b) does after the copyback barrier: arbitrate and commit in one transaction. */
function commit(runId: string, resultId: string) {
  return withTransaction(db.prisma(), async (tx) => {
    expect(await advanceFinalization(tx, { runId, from: ["result_accepted"], to: "workspace_finalizing", patch: { attempt: "increment", nextAttemptAt: new Date(Date.now() + 60_000) } })).toBe(true);
    expect(await advanceFinalization(tx, { runId, from: ["workspace_finalizing", "retryable_failure"], to: "arbitrating" })).toBe(true);
    const arbiter = await arbitrateRunResult(tx, { runId, resultId });
    expect(await advanceFinalization(tx, { runId, from: ["arbitrating"], to: "committed" })).toBe(true);
    expect(await completeRun(tx, { runId })).toBe(true);
    return arbiter;
  });
}

const issueOf = (id: string) => db.prisma().issue.findUniqueOrThrow({ where: { id } });
const runOf = (id: string) => db.prisma().heartbeatRun.findUniqueOrThrow({ where: { id } });
const coordinatorOf = (runId: string) => db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId } });

describe("finalization coordinator and status arbiter", () => {
  it.each(["in_review", "done", "blocked"] as const)(
    "R-ATT-5 the happy path ends committed (phase, native_phase, resultJson.finalizationPhase, no nextAttemptAt) and applies outcome %s",
    async (outcome) => {
      const { issue, runId, resultId } = await acceptedRun(outcome);
      const arbiter = await commit(runId, resultId);
      expect(arbiter).toEqual({ kind: "applied", issueId: issue.id, from: "in_progress", to: outcome, statusVersion: 2 });
      const coordinator = await coordinatorOf(runId);
      expect(coordinator).toMatchObject({ phase: "committed", nextAttemptAt: null, attempt: 1, resultId });
      expect(coordinator.committedAt).toBeInstanceOf(Date);
      const run = await runOf(runId);
      expect(run).toMatchObject({ status: "succeeded", nativePhase: "committed", resultJson: { finalizationPhase: "committed", resultId, outcome } });
      expect(await issueOf(issue.id)).toMatchObject({ status: outcome, statusVersion: 2, checkoutRunId: null, executionRunId: runId });
      const changed = await db.prisma().activityLog.findFirstOrThrow({ where: { entityId: issue.id, action: "issue.status_changed", actorType: "agent" } });
      expect(changed).toMatchObject({ actorId: world.agent.id, details: { from: "in_progress", to: outcome, runId, resultId } });
    },
  );

  it("R-ATT-5 a committed coordinator is never overwritten (CAS misses; forbidden transitions throw)", async () => {
    const { runId, resultId } = await acceptedRun();
    await commit(runId, resultId);
    await withTransaction(db.prisma(), async (tx) => {
      expect(await advanceFinalization(tx, { runId, from: ["result_accepted"], to: "workspace_finalizing" })).toBe(false);
      expect(await advanceFinalization(tx, { runId, from: ["arbitrating"], to: "terminal_failure" })).toBe(false);
      await expect(advanceFinalization(tx, { runId, from: ["committed"], to: "retryable_failure" })).rejects.toMatchObject({ code: "finalization_transition_invalid" });
    });
    await expect(failRun(db.prisma(), { runId, code: "late", message: "late failure" })).resolves.toEqual({ kind: "already_finished", status: "succeeded" });
    expect(await coordinatorOf(runId)).toMatchObject({ phase: "committed", failureCode: null });
    expect(await runOf(runId)).toMatchObject({ nativePhase: "committed", status: "succeeded" });
  });

  it("a compare-and-set from the wrong phase writes nothing, not even the heartbeat mirror", async () => {
    const { runId } = await acceptedRun();
    const before = await runOf(runId);
    await withTransaction(db.prisma(), async (tx) => {
      expect(await advanceFinalization(tx, { runId, from: ["workspace_finalizing"], to: "arbitrating" })).toBe(false);
    });
    expect(await coordinatorOf(runId)).toMatchObject({ phase: "result_accepted" });
    expect((await runOf(runId)).updatedAt).toEqual(before.updatedAt);
  });

  it("a retryable failure records its code and retry time; the retry resumes and commits", async () => {
    const { runId, resultId } = await acceptedRun();
    const retryAt = new Date(Date.now() + 30_000);
    await withTransaction(db.prisma(), async (tx) => {
      await advanceFinalization(tx, { runId, from: ["result_accepted"], to: "workspace_finalizing", patch: { attempt: "increment" } });
      await advanceFinalization(tx, { runId, from: ["workspace_finalizing"], to: "retryable_failure", patch: { failureCode: "export_failed", failureDetail: { why: "x" }, nextAttemptAt: retryAt } });
    });
    expect(await coordinatorOf(runId)).toMatchObject({ phase: "retryable_failure", failureCode: "export_failed", nextAttemptAt: retryAt });
    expect(await runOf(runId)).toMatchObject({ nativePhase: "retryable_failure", resultJson: { finalizationPhase: "retryable_failure" } });
    await withTransaction(db.prisma(), async (tx) => {
      expect(await advanceFinalization(tx, { runId, from: ["retryable_failure"], to: "workspace_finalizing", patch: { attempt: "increment", failureCode: null, failureDetail: null } })).toBe(true);
    });
    await withTransaction(db.prisma(), async (tx) => {
      await advanceFinalization(tx, { runId, from: ["workspace_finalizing"], to: "arbitrating" });
      await arbitrateRunResult(tx, { runId, resultId });
      await advanceFinalization(tx, { runId, from: ["arbitrating"], to: "committed" });
      await completeRun(tx, { runId });
    });
    expect(await coordinatorOf(runId)).toMatchObject({ phase: "committed", attempt: 2, nextAttemptAt: null, failureCode: null, failureDetail: null });
  });

  it("the arbiter keeps a task someone moved since the claim, records why, and still ends the checkout", async () => {
    const { issue, runId, resultId } = await acceptedRun("done");
    await db.prisma().issue.update({ where: { id: issue.id }, data: { status: "blocked", statusVersion: { increment: 1 } } });
    const arbiter = await commit(runId, resultId);
    expect(arbiter).toEqual({ kind: "not_applied", issueId: issue.id, status: "blocked", reason: "status_changed_since_claim" });
    expect(await issueOf(issue.id)).toMatchObject({ status: "blocked", statusVersion: 2, checkoutRunId: null });
    const why = await db.prisma().activityLog.findFirstOrThrow({ where: { entityId: runId, action: "run.result_not_applied" } });
    expect(why.details).toMatchObject({ reason: "status_changed_since_claim", issueId: issue.id, resultId });
    expect(await db.prisma().activityLog.count({ where: { entityId: issue.id, action: "issue.status_changed", actorType: "agent" } })).toBe(0);
  });

  it("the arbiter keeps a cancelled task, and a task another run executes (without clearing that run's checkout)", async () => {
    const cancelled = await acceptedRun("done");
    await db.prisma().issue.update({ where: { id: cancelled.issue.id }, data: { status: "cancelled", statusVersion: { increment: 1 } } });
    expect(await commit(cancelled.runId, cancelled.resultId)).toMatchObject({ kind: "not_applied", reason: "task_closed" });
    expect(await issueOf(cancelled.issue.id)).toMatchObject({ status: "cancelled" });

    const taken = await acceptedRun("done");
    const newer = await db.prisma().heartbeatRun.create({ data: { companyId: world.company.id, agentId: world.agent.id, nativeIssueId: taken.issue.id, status: "running" } });
    await db.prisma().issue.update({ where: { id: taken.issue.id }, data: { executionRunId: newer.id, checkoutRunId: newer.id } });
    expect(await commit(taken.runId, taken.resultId)).toMatchObject({ kind: "not_applied", reason: "not_execution_run" });
    expect(await issueOf(taken.issue.id)).toMatchObject({ status: "in_progress", executionRunId: newer.id, checkoutRunId: newer.id, statusVersion: 1 });
  });

  it("the arbiter refuses a rejected result (result_not_accepted) and changes nothing", async () => {
    const { issue, runId } = await runningRun(db.prisma(), world);
    const rejected = await publishRunResult(db.prisma(), { runId, agentId: world.agent.id, dedupeKey: "bad", document: { outcome: "done" }, source: "finish_api" });
    const before = await issueOf(issue.id);
    await expect(withTransaction(db.prisma(), (tx) => arbitrateRunResult(tx, { runId, resultId: rejected.resultId }))).rejects.toMatchObject({ code: "result_not_accepted" });
    expect(await issueOf(issue.id)).toEqual(before);
  });

  it("completeRun before the commit is refused (finalization_not_committed)", async () => {
    const { runId } = await acceptedRun();
    await expect(withTransaction(db.prisma(), (tx) => completeRun(tx, { runId }))).rejects.toMatchObject({ code: "finalization_not_committed" });
    expect((await runOf(runId)).status).toBe("running");
  });
});

describe("failRun", () => {
  it("fails the run, moves the coordinator to terminal_failure and blocks the task it still owns", async () => {
    const { issue, runId, resultId } = await acceptedRun("done");
    const outcome = await failRun(db.prisma(), { runId, code: "export_failed", message: "The sandbox export failed." });
    expect(outcome).toEqual({ kind: "failed", arbiter: { kind: "applied", issueId: issue.id, from: "in_progress", to: "blocked", statusVersion: 2 } });
    expect(await runOf(runId)).toMatchObject({ status: "failed", errorCode: "export_failed", nativePhase: "terminal_failure", resultJson: { finalizationPhase: "terminal_failure", resultId } });
    expect(await coordinatorOf(runId)).toMatchObject({ phase: "terminal_failure", failureCode: "export_failed", nextAttemptAt: null });
    expect(await issueOf(issue.id)).toMatchObject({ status: "blocked", checkoutRunId: null });
    expect(await db.prisma().activityLog.findFirstOrThrow({ where: { entityId: issue.id, action: "issue.status_changed", details: { path: ["to"], equals: "blocked" } } })).toMatchObject({ actorType: "system" });
    expect(await db.prisma().runEvent.count({ where: { runId, code: "run.failed", level: "error" } })).toBe(1);
    // Failing twice changes nothing more.
    expect(await failRun(db.prisma(), { runId, code: "again", message: "again" })).toEqual({ kind: "already_finished", status: "failed" });
    expect(await coordinatorOf(runId)).toMatchObject({ failureCode: "export_failed" });
  });

  it("a failed run leaves a task that someone closed meanwhile as it is", async () => {
    const { issue, runId } = await runningRun(db.prisma(), world);
    await db.prisma().issue.update({ where: { id: issue.id }, data: { status: "done", statusVersion: { increment: 1 } } });
    const outcome = await failRun(db.prisma(), { runId, code: "agent_crashed", message: "exit 1" });
    expect(outcome).toMatchObject({ kind: "failed", arbiter: { kind: "not_applied", reason: "task_closed" } });
    expect(await issueOf(issue.id)).toMatchObject({ status: "done", checkoutRunId: null });
  });

  it("an unknown run is not_found", async () => {
    await expect(failRun(db.prisma(), { runId: "00000000-0000-4000-8000-000000000000", code: "x", message: "x" })).rejects.toMatchObject({ kind: "not_found" });
  });
});
