// Terminal copyback failures pin and hold in the same transaction (R-EX-4, R-UI-2): a
// merge conflict and a final failure after host writes began each fail the run AND, in that one
// transaction, record the stop-only intent on the exact lease and open the board-owned hold that
// the task's notice shows. A kill inside that transaction leaves neither; once it commits both are
// there. Real PostgreSQL, real host files, real tar exports (the directory-backed provider).
import { execFile } from "node:child_process";
import { chmod, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { advanceFinalization } from "../../src/records/coordinator";
import { copybackProven } from "../../src/records/copyback-proven";
import { finalizeRun } from "../../src/finalization/finalize-run";
import { readStopIntent } from "../../src/leases/lease-metadata";
import { readCopybackFailedEvidence } from "../../src/records/actions";
import { COPYBACK_FAILED_CAUSE } from "../../src/records/causes";
import { listOpenActionsForIssue, noticeActionsOf } from "../../src/recovery/holds";
import { deriveTaskNotice } from "../../src/recovery/task-notice";
import { RUN_RESULT_SCHEMA } from "../../src/records/result-document";
import { wakeAgent } from "../../src/runs/wake-agent";
import { prepareRunWorkspace } from "../../src/workspace/prepare-run-workspace";
import { claimedRun, preparedRun, readTree, useWorld, writeTree, type World } from "./finalization-fixture";

const db = useTestDatabase();
let world: World;
useWorld(db, (w) => {
  world = w;
});

/** Everything the failure's transaction writes, read in one go. */
async function settled(runId: string, leaseId: string) {
  const prisma = db.prisma();
  const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
  return {
    run,
    coordinator: await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } }),
    lease: await prisma.environmentLease.findUniqueOrThrow({ where: { id: leaseId } }),
    actions: await prisma.issueRecoveryAction.findMany({ where: { runId } }),
    issue: await prisma.issue.findUniqueOrThrow({ where: { id: run.nativeIssueId } }),
  };
}

/** The notice the task view derives (the console's and REST's one path: holds.ts + task-notice.ts). */
async function noticeOf(issueId: string) {
  const rows = await listOpenActionsForIssue(db.prisma(), world.companyId, issueId);
  return deriveTaskNotice(await noticeActionsOf(db.prisma(), world.companyId, rows));
}

/** A merge conflict waiting to happen: the host and the sandbox both changed conflict.txt. */
async function conflictingRun() {
  const name = `conflict-${Math.random().toString(36).slice(2)}.txt`;
  await writeTree(world.hostPath, { [name]: "baseline" });
  const run = await preparedRun(world, "done");
  await writeFile(join(world.hostPath, name), "host version");
  await writeFile(join(run.sandbox, name), "sandbox version");
  return { ...run, name };
}

const execFileAsync = promisify(execFile);

/**
 * Makes a host directory refuse new entries for real: immutable (chattr +i) as root, whom mode bits
 * do not stop; read-only mode bits otherwise. Returns the undo.
 */
async function refuseEntries(dir: string): Promise<() => Promise<void>> {
  if (process.getuid?.() === 0) {
    await execFileAsync("chattr", ["+i", dir]);
    return async () => {
      await execFileAsync("chattr", ["-i", dir]);
    };
  }
  await chmod(dir, 0o555);
  return () => chmod(dir, 0o755);
}

describe("terminal copyback failures pin and hold in the failure's transaction", () => {
  it("R-EX-4: a merge conflict fails the run with the stop-only intent on its exact lease (ephemeral included) and the board-owned hold, all visible together", async () => {
    const prisma = db.prisma();
    const run = await conflictingRun();
    // R-EX-4: "ephemeral allocations included": release by policy must never delete its files.
    await prisma.environmentLease.update({ where: { id: run.handle.leaseId }, data: { leasePolicy: "ephemeral" } });
    const hostBefore = await readTree(world.hostPath);

    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "conflict" });
    expect(await readTree(world.hostPath)).toEqual(hostBefore);

    const s = await settled(run.runId, run.handle.leaseId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "workspace_merge_conflict" });
    expect(s.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "workspace_merge_conflict", resultId: run.resultId });
    expect(s.lease.status).toBe("pending_cleanup");
    expect(readStopIntent(s.lease.metadata, s.lease)).toMatchObject({ kind: "present", value: { leaseId: run.handle.leaseId, runId: run.runId, providerLeaseId: run.handle.providerLeaseId } });
    expect(s.actions).toHaveLength(1);
    const action = s.actions[0]!;
    expect(action).toMatchObject({ cause: COPYBACK_FAILED_CAUSE, ownerType: "board", status: "active", leaseId: run.handle.leaseId, wakePolicy: { automaticWake: false } });
    expect(readCopybackFailedEvidence(action.evidence)).toMatchObject({
      runId: run.runId,
      resultId: run.resultId,
      leaseId: run.handle.leaseId,
      leaseIds: [run.handle.leaseId],
      providerLeaseId: run.handle.providerLeaseId,
      failure: "merge_conflict",
      failureCode: "workspace_merge_conflict",
      hostWritesStarted: false,
      conflictCount: 1,
      conflicts: [{ path: run.name, kind: "both_changed" }],
      pin: "pinned",
    });
    expect(action.nextAction).toMatch(/merge conflict/);
    expect(action.nextAction).toContain("recovery-actions/resolve");
    expect(action.nextAction).not.toContain(world.hostPath);
  });

  it("R-EX-4: a kill inside the failure's transaction leaves neither the intent nor the hold (nor the failure); the next owner fails it with both", async () => {
    const prisma = db.prisma();
    const run = await conflictingRun();
    // The failure's transaction dies right where the hold is written, after the lease was pinned:
    // the backend running it terminates itself (a crash of that connection mid-transaction).
    await prisma.$executeRawUnsafe(`CREATE OR REPLACE FUNCTION test_kill_at_hold() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_terminate_backend(pg_backend_pid());
        RETURN NEW;
      END $$`);
    await prisma.$executeRawUnsafe(
      `CREATE TRIGGER test_kill_at_hold AFTER INSERT ON issue_recovery_actions FOR EACH ROW WHEN (NEW.cause = '${COPYBACK_FAILED_CAUSE}') EXECUTE FUNCTION test_kill_at_hold()`,
    );
    try {
      await expect(finalizeRun(world.deps(), { runId: run.runId })).rejects.toBeTruthy();
    } finally {
      await prisma.$executeRawUnsafe(`DROP TRIGGER IF EXISTS test_kill_at_hold ON issue_recovery_actions`);
      await prisma.$executeRawUnsafe(`DROP FUNCTION IF EXISTS test_kill_at_hold()`);
    }
    let s = await settled(run.runId, run.handle.leaseId);
    // Neither without the other: no intent, no hold, and the run and coordinator as before.
    expect(s.actions).toEqual([]);
    expect(s.lease.status).toBe("active");
    expect(readStopIntent(s.lease.metadata, s.lease).kind).toBe("absent");
    expect(s.coordinator.phase).toBe("workspace_finalizing");
    expect(s.run.status).toBe("running");

    // The next owner finds the attempt interrupted, meets the same conflict and settles it whole.
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "conflict" });
    s = await settled(run.runId, run.handle.leaseId);
    expect(s.run.status).toBe("failed");
    expect(s.coordinator.phase).toBe("terminal_failure");
    expect(readStopIntent(s.lease.metadata, s.lease).kind).toBe("present");
    expect(s.actions.map((a) => [a.cause, a.status])).toEqual([[COPYBACK_FAILED_CAUSE, "active"]]);
  });

  it("R-EX-4: a final failure after host writes began fails the run with the stop-only intent and the hold, which records that the host was written", async () => {
    const prisma = db.prisma();
    const locked = `locked-${Math.random().toString(36).slice(2)}`;
    const gone = `gone-${Math.random().toString(36).slice(2)}.txt`;
    await writeTree(world.hostPath, { [gone]: "removed by the sandbox", [`${locked}/keep.txt`]: "kept" });
    const run = await preparedRun(world, "done");
    // The sandbox removes a top-level file (the merge's first host write) and adds one in a
    // directory the host refuses entries in: the merge fails after it began writing.
    await rm(join(run.sandbox, gone));
    await writeFile(join(run.sandbox, locked, "new.txt"), "cannot land");
    const undo = await refuseEntries(join(world.hostPath, locked));
    let outcome;
    try {
      outcome = await finalizeRun(world.deps(), { runId: run.runId });
    } finally {
      await undo();
    }
    expect(outcome).toMatchObject({ kind: "terminal_failure", code: "copyback_write_failed" });
    expect((await readTree(world.hostPath))[gone]).toBeUndefined(); // the host was written

    const s = await settled(run.runId, run.handle.leaseId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "copyback_write_failed" });
    expect(s.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "copyback_write_failed" });
    expect(await copybackProven(prisma, { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(false);
    expect(s.lease.status).toBe("pending_cleanup");
    expect(readStopIntent(s.lease.metadata, s.lease).kind).toBe("present");
    expect(s.actions).toHaveLength(1);
    expect(s.actions[0]).toMatchObject({ cause: COPYBACK_FAILED_CAUSE, ownerType: "board", status: "active", leaseId: run.handle.leaseId });
    expect(readCopybackFailedEvidence(s.actions[0]!.evidence)).toMatchObject({ failure: "copyback_failed", failureCode: "copyback_write_failed", hostWritesStarted: true, conflictCount: null });
    expect(s.actions[0]!.nextAction).toMatch(/after host writes began/);
  });

  it("R-UI-2: the task notice shows the copyback-failed hold (a brief explanation, Inspect run's run id, no diagnostics), and ordinary work cannot clear it", async () => {
    const run = await conflictingRun();
    expect(await finalizeRun(world.deps(), { runId: run.runId })).toMatchObject({ kind: "conflict" });
    const [action] = await db.prisma().issueRecoveryAction.findMany({ where: { runId: run.runId } });
    expect(action).toBeDefined();
    const notice = await noticeOf(run.issueId);
    expect(notice).toMatchObject({ kind: "attention", runId: run.runId, actionId: action!.id, cause: COPYBACK_FAILED_CAUSE });
    const message = (notice as { message: string }).message;
    expect(message).toMatch(/saving this task's work back/i);
    expect(message).not.toMatch(/recovery needs an operator's attention/); // its own words, not the fallback
    for (const secret of [world.hostPath, run.handle.providerLeaseId, run.runId, "workspace_merge_conflict"]) expect(message).not.toContain(secret);
    // R-RR-7: a wake cannot start work past it.
    await expect(wakeAgent(db.prisma(), { companyId: world.companyId, issueId: run.issueId, actor: { type: "system", id: null } })).rejects.toMatchObject({
      code: "recovery_hold_open",
      details: { actionId: action!.id, cause: COPYBACK_FAILED_CAUSE },
    });
  });
});

describe("publication repeats the binding check", () => {
  it.each([
    ["moved to done", { status: "done" as const, statusVersion: { increment: 1 } }, "task_closed"],
    ["cancelled", { status: "cancelled" as const, statusVersion: { increment: 1 } }, "task_closed"],
    ["unassigned", { assigneeAgentId: null }, "task_reassigned"],
  ])("R-RW-4: a task %s between admission and copy gets none of the run's files: nothing written, the run held with its sandbox pinned", async (_what, change, reason) => {
    const prisma = db.prisma();
    await writeTree(world.hostPath, { "base.txt": "host" });
    const run = await preparedRun(world, "done");
    const name = `old-${Math.random().toString(36).slice(2)}.txt`;
    await writeTree(run.sandbox, { [name]: "old work" });
    await writeFile(join(run.sandbox, "base.txt"), "old edit");
    const hostBefore = await readTree(world.hostPath);
    // The finalization was admitted (ownership taken, the attempt started); the task moves on
    // while the sandbox is exported, before anything is merged.
    world.provider.faults.onExport = async () => {
      await prisma.issue.update({ where: { id: run.issueId }, data: change });
    };
    let outcome;
    try {
      outcome = await finalizeRun(world.deps(), { runId: run.runId });
    } finally {
      world.provider.faults.onExport = undefined;
    }
    expect(outcome).toMatchObject({ kind: "terminal_failure", code: "finalization_binding_changed" });
    expect(await readTree(world.hostPath)).toEqual(hostBefore);
    expect(await copybackProven(prisma, { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(false);

    const s = await settled(run.runId, run.handle.leaseId);
    expect(s.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "finalization_binding_changed" });
    expect(s.run).toMatchObject({ status: "failed", errorCode: "finalization_binding_changed" });
    // The person's change stands (the arbiter keeps a closed or moved task as it is).
    if ("status" in change) expect(s.issue.status).toBe(change.status);
    expect(readStopIntent(s.lease.metadata, s.lease).kind).toBe("present");
    expect(s.actions.map((a) => a.cause)).toEqual([COPYBACK_FAILED_CAUSE]);
    expect(readCopybackFailedEvidence(s.actions[0]!.evidence)).toMatchObject({ failure: "binding_changed", bindingReason: reason, hostWritesStarted: false });
  });
});

describe("the commit step's terminal branch", () => {
  it("R-EX-4: a result refused at the commit, after its files reached the host, fails the run with the stop-only intent and the copyback-failed hold in the same transaction", async () => {
    const prisma = db.prisma();
    await writeTree(world.hostPath, { "base.txt": "host" });
    const claimed = await claimedRun(world);
    await prepareRunWorkspace({ db: world.db, locks: world.locks }, { runId: claimed.runId, lease: claimed.handle, plugin: world.provider });
    // The run's accepted result is one this release's arbiter refuses at the commit (an outcome it
    // does not arbitrate, as accepted by another release): result_not_accepted, a domain refusal,
    // so the merge writes the files and only the commit fails, for good.
    const refused = await prisma.nativeRunResult.create({
      data: {
        companyId: world.companyId,
        runId: claimed.runId,
        issueId: claimed.issueId,
        agentId: world.agentId,
        schemaStatus: "accepted",
        payload: { schema: RUN_RESULT_SCHEMA, outcome: "approved", summary: "Did the work." },
        canonicalSha256: "0".repeat(64),
        dedupeKey: "another-release",
      },
    });
    await withTransaction(prisma, (tx) => advanceFinalization(tx, { runId: claimed.runId, from: ["observed"], to: "result_accepted", patch: { resultId: refused.id } }));
    const run = { ...claimed, resultId: refused.id };
    const name = `landed-${Math.random().toString(36).slice(2)}.txt`;
    await writeTree(run.sandbox, { [name]: "the run's work" });
    const outcome = await finalizeRun(world.deps(), { runId: run.runId });
    expect(outcome).toMatchObject({ kind: "terminal_failure", code: "result_not_accepted" });
    expect((await readTree(world.hostPath))[name]).toBe("the run's work"); // host writes began (and finished)
    expect(await copybackProven(prisma, { companyId: world.companyId, runId: run.runId, issueId: run.issueId })).toBe(true);

    const s = await settled(run.runId, run.handle.leaseId);
    expect(s.run).toMatchObject({ status: "failed", errorCode: "result_not_accepted" });
    expect(s.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "result_not_accepted", resultId: run.resultId });
    expect(s.lease.status).toBe("pending_cleanup");
    expect(readStopIntent(s.lease.metadata, s.lease)).toMatchObject({ kind: "present", value: { leaseId: run.handle.leaseId, runId: run.runId } });
    expect(s.actions).toHaveLength(1);
    expect(s.actions[0]).toMatchObject({ cause: COPYBACK_FAILED_CAUSE, ownerType: "board", status: "active", leaseId: run.handle.leaseId, wakePolicy: { automaticWake: false } });
    expect(readCopybackFailedEvidence(s.actions[0]!.evidence)).toMatchObject({
      runId: run.runId,
      resultId: run.resultId,
      leaseId: run.handle.leaseId,
      failure: "result_refused",
      failureCode: "result_not_accepted",
      hostWritesStarted: true,
      conflictCount: null,
      pin: "pinned",
    });
    expect(s.actions[0]!.nextAction).toMatch(/reached the host workspace/);
    expect(s.actions[0]!.nextAction).toContain("recovery-actions/resolve");
    // R-UI-2: the task notice shows it (its own words).
    const notice = await noticeOf(run.issueId);
    expect(notice).toMatchObject({ kind: "attention", runId: run.runId, actionId: s.actions[0]!.id, cause: COPYBACK_FAILED_CAUSE });
  });
});
