// R-RR-7 with real PostgreSQL: a new message, Retry (re-wake after a failed run) and `/new` (a new
// conversation generation) never clear an open recovery action, of any cause. The message and the
// new generation are saved and wait for the hold; Retry and Wake are refused with the reason; the
// action row is byte for byte as it was. Once the hold clears, Retry admits the ordinary way and
// the saved messages are there for the next run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { isDomainError } from "../../src/errors";
import { isNewConversationCommand, postIssueMessage } from "../../src/runs/post-message";
import { retryRun } from "../../src/runs/retry-run";
import { holdReason } from "../../src/runs/recovery-hold";
import { SYSTEM_ACTOR, wakeAgent } from "../../src/runs/index";
import { DispatchWorld, type Task } from "../dispatch/dispatch-fixture";
import { HOLD_CAUSES, seedHold, type HoldCause } from "./recovery-fixture";

const world = new DispatchWorld(useTestDatabase({ poolSize: 8 }));
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

const BOARD = { type: "user" as const, id: null };

/** A task whose agent's run failed (fake provider: exit 3, no result), its sandbox kept. */
async function failedTask(): Promise<{ task: Task; runId: string; leaseId: string | null }> {
  world.scriptFake(() => ({ exitCode: 3 }));
  const task = await world.task({ provider: "fake" });
  const runId = await world.runOnce(task);
  const s = await world.state(runId);
  expect(s.run.status).toBe("failed");
  await clearHolds(task.issueId);
  return { task, runId, leaseId: s.leases[0]?.id ?? null };
}

/** The failed run opened its own file-recovery obligation (R-FO-3); each test seeds the cause it tests instead. */
async function clearHolds(issueId: string): Promise<void> {
  await world.db.issueRecoveryAction.updateMany({ where: { issueId, status: { in: ["active", "escalated"] } }, data: { status: "resolved", outcome: "restored", resolvedAt: new Date() } });
}

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(() => null, (e: unknown) => e);
  if (!isDomainError(error)) throw new Error(`expected a domain error, got ${String(error)}`);
  return error;
}

describe("ordinary work leaves every open recovery action as it was", () => {
  for (const cause of HOLD_CAUSES) {
    it(`R-RR-7 a message, Retry and /new leave the ${cause} hold exactly as it was`, async () => {
      const { task, runId, leaseId } = await failedTask();
      const actionId = await seedHold(world.db, cause as HoldCause, { companyId: task.companyId, issueId: task.issueId, runId, leaseId });
      const hold = await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: actionId } });
      expect(hold.status).toBe("active");
      const issueBefore = await world.db.issue.findUniqueOrThrow({ where: { id: task.issueId } });
      const runsBefore = await world.db.heartbeatRun.count({ where: { nativeIssueId: task.issueId } });

      // A new message: saved, and it says it waits for the hold.
      const message = await postIssueMessage(world.db, { companyId: task.companyId, issueId: task.issueId, actor: BOARD, body: "Please try again with the fix." });
      expect(message).toMatchObject({ newConversation: false, conversationGeneration: issueBefore.conversationGeneration, deliveryHeld: { actionId, cause, reason: holdReason(cause) } });

      // Retry after the failed run: refused with the reason, nothing queued.
      const retry = await refusal(retryRun(world.db, { companyId: task.companyId, runId, actor: BOARD }));
      expect(retry).toMatchObject({ code: "recovery_hold_open", details: { actionId, cause } });
      expect(retry.message).toMatch(/waiting for recovery/);
      expect(retry.message).toContain(holdReason(cause));

      // /new: a new conversation generation, saved; the hold survives the reset.
      const reset = await postIssueMessage(world.db, { companyId: task.companyId, issueId: task.issueId, actor: BOARD, body: "/new start over from the saved plan" });
      expect(reset).toMatchObject({ newConversation: true, conversationGeneration: issueBefore.conversationGeneration + 1, deliveryHeld: { actionId } });

      // Wake is refused the same way.
      expect(await refusal(wakeAgent(world.db, { companyId: task.companyId, issueId: task.issueId, actor: BOARD }))).toMatchObject({ code: "recovery_hold_open" });

      // The hold is byte for byte as it was; no run was queued; the task kept status and owner.
      expect(await world.db.issueRecoveryAction.findUniqueOrThrow({ where: { id: actionId } })).toEqual(hold);
      expect(await world.db.issueRecoveryAction.count({ where: { issueId: task.issueId, status: { in: ["active", "escalated"] } } })).toBe(1);
      expect(await world.db.heartbeatRun.count({ where: { nativeIssueId: task.issueId } })).toBe(runsBefore);
      const issueAfter = await world.db.issue.findUniqueOrThrow({ where: { id: task.issueId } });
      expect(issueAfter).toMatchObject({ status: issueBefore.status, assigneeAgentId: issueBefore.assigneeAgentId, statusVersion: issueBefore.statusVersion, conversationGeneration: issueBefore.conversationGeneration + 1 });
      const messages = await world.db.issueMessage.findMany({ where: { issueId: task.issueId }, orderBy: { createdAt: "asc" } });
      expect(messages.map((m) => [m.body, m.conversationGeneration])).toEqual([
        ["Please try again with the fix.", issueBefore.conversationGeneration],
        ["/new start over from the saved plan", issueBefore.conversationGeneration + 1],
      ]);
    });
  }

  it("R-RR-7 later saved messages continue through ordinary admission only after the hold clears", async () => {
    const { task, runId, leaseId } = await failedTask();
    const actionId = await seedHold(world.db, "native_workspace_file_recovery_required", { companyId: task.companyId, issueId: task.issueId, runId, leaseId });
    await postIssueMessage(world.db, { companyId: task.companyId, issueId: task.issueId, actor: BOARD, body: "/new" });
    expect((await refusal(retryRun(world.db, { companyId: task.companyId, runId, actor: BOARD }))).code).toBe("recovery_hold_open");
    // The hold is resolved by its own recovery path (here: as the resolve service leaves it).
    await world.db.issueRecoveryAction.update({ where: { id: actionId }, data: { status: "resolved", outcome: "restored", resolvedAt: new Date() } });
    const later = await postIssueMessage(world.db, { companyId: task.companyId, issueId: task.issueId, actor: BOARD, body: "Carry on." });
    expect(later.deliveryHeld).toBeNull();
    const retried = await retryRun(world.db, { companyId: task.companyId, runId, actor: BOARD });
    expect(retried).toMatchObject({ created: true, predecessorRunId: runId });
    const next = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: retried.runId } });
    expect(next).toMatchObject({ status: "queued", predecessorRunId: runId, wakeReason: "retry" });
    await world.db.heartbeatRun.update({ where: { id: next.id }, data: { status: "cancelled", finishedAt: new Date() } });
    // The messages of the current generation are what the next run reads.
    const issue = await world.db.issue.findUniqueOrThrow({ where: { id: task.issueId } });
    const current = await world.db.issueMessage.findMany({ where: { issueId: task.issueId, conversationGeneration: issue.conversationGeneration }, orderBy: { createdAt: "asc" } });
    expect(current.map((m) => m.body)).toEqual(["/new", "Carry on."]);
  });
});

describe("Retry's own refusals", () => {
  it("R-RR-7 only the task's latest failed, timed-out or stopped run can be retried; refusals change nothing", async () => {
    world.scriptFake(() => ({ exitCode: 0 }));
    const ok = await world.task({ provider: "fake", script: "true" });
    // The fake agent exits 0 without a result: the run fails; a second, superseding run follows.
    const first = await world.runOnce(ok);
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: first } })).status).toBe("failed");
    await clearHolds(ok.issueId);
    const second = await retryRun(world.db, { companyId: ok.companyId, runId: first, actor: BOARD });
    expect(second.created).toBe(true);
    const runs = await world.db.heartbeatRun.count({ where: { nativeIssueId: ok.issueId } });
    expect((await refusal(retryRun(world.db, { companyId: ok.companyId, runId: first, actor: BOARD }))).code).toBe("run_superseded");
    expect((await refusal(retryRun(world.db, { companyId: ok.companyId, runId: second.runId, actor: BOARD }))).code).toBe("run_not_retryable");
    const other = await world.db.company.create({ data: { name: "Retry other co", issuePrefix: "RTO" } });
    expect((await refusal(retryRun(world.db, { companyId: other.id, runId: first, actor: BOARD }))).code).toBe("not_found");
    expect(await world.db.heartbeatRun.count({ where: { nativeIssueId: ok.issueId } })).toBe(runs);
    // The queued retry is not this file's to run: later tests claim their own runs.
    await world.db.heartbeatRun.update({ where: { id: second.runId }, data: { status: "cancelled", finishedAt: new Date() } });
  });

  it("R-RR-7 /new is recognised alone or before text, never inside a message", () => {
    expect(isNewConversationCommand("/new")).toBe(true);
    expect(isNewConversationCommand("  /new  please restart")).toBe(true);
    expect(isNewConversationCommand("/newer")).toBe(false);
    expect(isNewConversationCommand("use /new to restart")).toBe(false);
  });

  it("R-RR-7 an empty or oversized message is refused and nothing is saved", async () => {
    const { task } = await failedTask();
    expect((await refusal(postIssueMessage(world.db, { companyId: task.companyId, issueId: task.issueId, actor: SYSTEM_ACTOR, body: "   " }))).code).toBe("message_empty");
    expect((await refusal(postIssueMessage(world.db, { companyId: task.companyId, issueId: task.issueId, actor: SYSTEM_ACTOR, body: "x".repeat(20_001) }))).code).toBe("message_too_long");
    expect(await world.db.issueMessage.count({ where: { issueId: task.issueId } })).toBe(0);
  });
});
