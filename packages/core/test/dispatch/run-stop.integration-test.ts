// Stop (run-only cancellation, R-RC-7) end to end on the real local provider: a real agent process
// group in a real sandbox, real PostgreSQL. The Stop service records the request; the executor
// notices it by polling its run row, stops the agent's whole group, pins the sandbox (stop-only
// intent) in the transaction that cancels the run, and only then releases the environment.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PrismaClient } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { executeRun } from "../../src/dispatch/execute-run";
import { isDomainError } from "../../src/errors";
import { readStopIntent } from "../../src/leases/lease-metadata";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { settledRunLeasesSweep } from "../../src/recovery/sweeps/settled-run-leases-sweep";
import { stopRetentionSweep } from "../../src/recovery/sweeps/stop-retention-sweep";
import { publishRunResult } from "../../src/runs/publish-result";
import { readStopAcknowledgement, readStopRetention } from "../../src/records/run-stop-records";
import { stopRun } from "../../src/runs/stop-run";
import { wakeAgent } from "../../src/runs/wake-agent";
import { DispatchWorld, PLAIN_LOCAL_PLUGIN, RESULT_IN_REVIEW, type Task } from "./dispatch-fixture";

const database = useTestDatabase({ poolSize: 10 });
const world = new DispatchWorld(database);
beforeAll(() => world.setUp());
afterAll(() => world.tearDown());

const BOARD = { type: "user" as const, id: null };
const sandboxFile = (providerLeaseId: string, rel: string) => path.join(world.instanceRoot, "sandboxes", providerLeaseId, "workspace", rel);

/** Gone: no such PID, or a zombie. */
async function processGone(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  return stat === null || stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Someone else holds the task's row lock until `release()`; `holder` settles once it let go. */
async function holdTaskLock(task: Task): Promise<{ release: () => void; holder: Promise<void> }> {
  let release: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked: () => void = () => undefined;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = world.db.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT id FROM issues WHERE id = ${task.issueId}::uuid FOR UPDATE`;
      locked();
      await held;
    },
    { timeout: 60_000, maxWait: 10_000 },
  );
  await isLocked;
  return { release, holder };
}

/** A sandbox agent that writes a partial file, leaves a background child and works "forever". */
const WORKING_AGENT = "printf 'partial work\\n' > partial.txt && (sleep 600 &) && sleep 600";

/** Wakes and claims the task's run and starts executing it in the background; resolves once the agent started. */
async function startRun(task: Task, deps: Parameters<DispatchWorld["deps"]>[0] = {}) {
  const runId = await world.wake(task);
  const claimed = await world.claim(1);
  const mine = claimed.find((r) => r.runId === runId);
  if (!mine) throw new Error("run not claimed");
  const execution = executeRun(world.deps({ stopPollMs: 100, ...deps }), mine, new AbortController().signal);
  const agentPid = await waitFor("the agent to start", async () => {
    const run = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const agent = (run.runnerProfileJson as { agentProcess?: { pid: number } }).agentProcess;
    return agent?.pid ?? null;
  });
  // The agent's first file is in its sandbox before anyone presses Stop.
  const lease = await waitFor("the lease", () => world.db.environmentLease.findFirst({ where: { runId } }));
  await waitFor("the partial file", () => readFile(sandboxFile(lease.providerLeaseId!, "partial.txt"), "utf8").then(() => true, () => false));
  return { runId, execution, agentPid, leaseId: lease.id };
}

describe("Stop on the local provider", () => {
  it("R-RC-7 stops the agent's process group, pins the prepared workspace before the environment is released, and ends the run cancelled with its acknowledgement", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: WORKING_AGENT, files: { "base.txt": "host\n" } });
    const { runId, execution, agentPid, leaseId } = await startRun(task);
    const before = await world.state(runId);
    expect(before.run.status).toBe("running");

    const answer = await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD });
    expect(answer).toMatchObject({ kind: "stop_requested", runId, duplicate: false });
    // A repeated Stop answers the same request.
    expect(await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD })).toMatchObject({ kind: "stop_requested", requestId: answer.requestId, duplicate: true });
    await execution;

    expect(await processGone(agentPid)).toBe(true);
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "cancelled", errorCode: "run_stopped" });
    expect(s.run.finishedAt).not.toBeNull();
    const ack = readStopAcknowledgement(s.run.runnerProfileJson);
    expect(ack).toMatchObject({ requestId: answer.requestId, by: "executor", leaseId, controller: { pid: process.pid } });
    const retention = readStopRetention(s.run.runnerProfileJson);
    expect(retention).toMatchObject({ requestId: answer.requestId, outcome: "pinned", leaseId, by: "executor" });
    // The release continued exactly the pinned intent: the receipt answers its request id.
    const lease = s.leases[0]!;
    expect(lease).toMatchObject({ id: leaseId, status: "released", leasePolicy: "ephemeral" });
    expect(lease.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { requestId: retention!.stopIntentRequestId, method: "environmentStopLease" } });
    // Pin before release, in the run's own log.
    const pinAt = s.codes.indexOf("run.stop_retention");
    expect(pinAt).toBeGreaterThan(-1);
    expect(s.codes.indexOf("lease.released")).toBeGreaterThan(pinAt);
    expect(s.codes).toContain("run.stop_requested");
    // The agent's partial work is kept in the stopped sandbox; nothing reached the host.
    expect(await readFile(sandboxFile(lease.providerLeaseId!, "partial.txt"), "utf8")).toBe("partial work\n");
    await expect(readFile(path.join(task.hostPath, "partial.txt"), "utf8")).rejects.toThrow();
    // The kept sandbox holds unpublished edits: one board-owned file-recovery obligation names the
    // run and its exact allocation, opened in the pinning transaction.
    const obligations = await world.db.issueRecoveryAction.findMany({ where: { runId, status: "active" } });
    expect(obligations).toHaveLength(1);
    expect(obligations[0]).toMatchObject({ id: retention!.actionId, cause: "native_workspace_file_recovery_required", ownerType: "board", leaseId });
    expect(obligations[0]!.evidence).toMatchObject({ failureCode: "run_stopped", providerLeaseId: lease.providerLeaseId, pin: "pinned", agentStop: "stopped", agentProcess: { pid: agentPid } });
    // Run-only: the task keeps its status; the run's checkout ends; nothing is finalized.
    expect(s.issue).toMatchObject({ status: "in_progress", checkoutRunId: null });
    expect(s.coordinator).toMatchObject({ phase: "terminal_failure", failureCode: "run_stopped" });
    const activity = await world.db.activityLog.findMany({ where: { entityId: runId }, orderBy: { createdAt: "asc" } });
    expect(activity.map((a) => a.action)).toEqual(expect.arrayContaining(["run.stop_requested", "run.cancelled"]));

    // R-RC-7: stopping the finished run answers 409 run_not_active and changes nothing.
    const row = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const refused = await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD }).catch((error: unknown) => error);
    expect(isDomainError(refused) && refused.kind === "conflict" && refused.code).toBe("run_not_active");
    expect(await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).toEqual(row);
  });

  it("R-RC-7 a queued run is cancelled at once with its acknowledgement; another company's run reads not found", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: WORKING_AGENT });
    const runId = await world.wake(task);
    const other = await world.db.company.create({ data: { name: "Other stop co", issuePrefix: "OTH" } });
    const hidden = await stopRun(world.db, { companyId: other.id, runId, actor: BOARD }).catch((error: unknown) => error);
    expect(isDomainError(hidden) && hidden.code).toBe("not_found");
    expect((await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("queued");

    const answer = await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD });
    expect(answer.kind).toBe("cancelled");
    const run = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: "cancelled", errorCode: "run_stopped" });
    expect(readStopAcknowledgement(run.runnerProfileJson)).toMatchObject({ by: "stop_service", leaseId: null });
    expect(readStopRetention(run.runnerProfileJson)).toMatchObject({ outcome: "nothing_to_retain" });
    // Nothing claims it any more.
    expect(await world.claim(5)).toEqual([]);
  });

  it("R-RC-7 losing the task lock during retention keeps the source active for a later pass; the sweep pins it and the stop-only cleanup keeps its files", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: WORKING_AGENT });
    const { runId, execution, agentPid, leaseId } = await startRun(task, { taskLockWaitMs: 300 });

    // Someone else holds the task's row lock for the whole stop.
    const { release, holder } = await holdTaskLock(task);
    try {
      await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD });
      await execution;
      expect(await processGone(agentPid)).toBe(true);
      const s = await world.state(runId);
      expect(s.run.status).toBe("cancelled");
      expect(readStopAcknowledgement(s.run.runnerProfileJson)).toMatchObject({ leaseId });
      expect(readStopRetention(s.run.runnerProfileJson)).toBeNull();
      expect(s.codes).toContain("run.stop_retention_deferred");
      // The source stays active, exactly as it was: not released, not pinned by anyone else.
      expect(s.leases[0]).toMatchObject({ id: leaseId, status: "active" });
      expect(await world.db.issueRecoveryAction.count({ where: { runId } })).toBe(0);
      const settled = settledRunLeasesSweep({ db: world.db, registry: world.registry });
      expect((await settled.due(50)).map((u) => u.leaseId)).not.toContain(leaseId);
      // The sweep skips a task whose lock is still held, without a write.
      const sweep = stopRetentionSweep({ db: world.db });
      expect((await sweep.due(50)).map((u) => u.runId)).toContain(runId);
      expect(await sweep.handle({ runId })).toBe("task_lock_busy");
      expect((await world.db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } })).status).toBe("active");
    } finally {
      release();
      await holder;
    }

    // A later pass: pinned under the task lock, then stopped by the existing stop-only cleanup.
    const sweep = stopRetentionSweep({ db: world.db });
    expect(await sweep.handle({ runId })).toBe("pinned");
    const pinned = await world.db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } });
    expect(pinned.status).toBe("pending_cleanup");
    expect(readStopIntent(pinned.metadata, pinned).kind).toBe("present");
    const run = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const swept = readStopRetention(run.runnerProfileJson);
    expect(swept).toMatchObject({ outcome: "pinned", by: "sweep", leaseId });
    expect(await world.db.issueRecoveryAction.findMany({ where: { runId, status: "active" }, select: { id: true, cause: true } })).toEqual([{ id: swept!.actionId, cause: "native_workspace_file_recovery_required" }]);
    expect((await sweep.due(50)).map((u) => u.runId)).not.toContain(runId);

    const cleanup = leaseCleanupSweep({ db: world.db, registry: world.registry, controller: world.deps().controller });
    const due = (await cleanup.due(50)).find((u) => u.leaseId === leaseId);
    expect(due).toBeDefined();
    expect(await cleanup.handle(due!)).toBe("stopped_and_retained");
    const stopped = await world.db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } });
    expect(stopped.status).toBe("released");
    expect(await readFile(sandboxFile(stopped.providerLeaseId!, "partial.txt"), "utf8")).toBe("partial work\n");
    // The task was not reopened or moved, and no other run was started.
    expect((await world.db.issue.findUniqueOrThrow({ where: { id: task.issueId } })).status).toBe("in_progress");
    expect(await world.db.heartbeatRun.count({ where: { nativeIssueId: task.issueId } })).toBe(1);
  });

  it("R-RC-7 host affinity: any host's stop retention sweep pins another host's stopped sandbox (records only); only the sandbox's own host stops it", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: WORKING_AGENT });
    const { runId, execution, leaseId } = await startRun(task, { taskLockWaitMs: 300 });
    const { release, holder } = await holdTaskLock(task);
    try {
      await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD });
      await execution;
    } finally {
      release();
      await holder;
    }
    // The stopped run's workspace and its local sandbox are host A's.
    await world.db.executionWorkspace.update({ where: { id: task.workspaceId }, data: { hostId: "host-a" } });
    await world.db.environmentLease.update({ where: { id: leaseId }, data: { hostId: "host-a" } });
    try {
      // Host B's reconciler runs the stop retention sweep (it takes no host: it writes records and a
      // stop-only intent under row locks, and touches no file or process).
      expect(await stopRetentionSweep({ db: world.db }).handle({ runId })).toBe("pinned");
      const cleanupOn = (hostId: string) => leaseCleanupSweep({ db: world.db, registry: world.registry, controller: world.deps().controller, hostId });
      expect((await cleanupOn("host-b").due(50)).map((u) => u.leaseId)).not.toContain(leaseId);
      expect((await world.db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } })).status).toBe("pending_cleanup");
      const due = (await cleanupOn("host-a").due(50)).find((u) => u.leaseId === leaseId);
      expect(due).toBeDefined();
      expect(await cleanupOn("host-a").handle(due!)).toBe("stopped_and_retained");
      const stopped = await world.db.environmentLease.findUniqueOrThrow({ where: { id: leaseId } });
      expect(stopped.status).toBe("released");
      expect(await readFile(sandboxFile(stopped.providerLeaseId!, "partial.txt"), "utf8")).toBe("partial work\n");
    } finally {
      await world.db.executionWorkspace.update({ where: { id: task.workspaceId }, data: { hostId: null } });
    }
  });

  it("R-RC-7 a run waiting for a busy lease is stopped without a workspace: cancelled, not requeued, nothing to retain", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: WORKING_AGENT });
    const holder = await startRun(task);
    // A second task on the same environment and workspace: its run waits for the one ephemeral lease.
    const second = await world.db.issue.create({
      data: { companyId: task.companyId, number: 9_000 + Math.floor(Math.random() * 1_000), identifier: `DSP-W${Date.now()}`, title: "Waits for the lease", status: "todo", executionWorkspaceId: task.workspaceId },
    });
    const waiting = await wakeAgent(world.db, { companyId: task.companyId, issueId: second.id, agentId: task.agentId, actor: BOARD });
    const claimed = (await world.claim(1)).find((r) => r.runId === waiting.runId);
    expect(claimed).toBeDefined();
    const execution = executeRun(world.deps({ stopPollMs: 100, leaseWaitMs: 60_000 }), claimed!, new AbortController().signal);
    await waitFor("the lease wait", async () => (await world.state(waiting.runId)).codes.includes("lease.busy"));

    expect(await stopRun(world.db, { companyId: task.companyId, runId: waiting.runId, actor: BOARD })).toMatchObject({ kind: "stop_requested" });
    await execution;
    const s = await world.state(waiting.runId);
    expect(s.run).toMatchObject({ status: "cancelled", errorCode: "run_stopped" });
    expect(s.codes).not.toContain("run.requeued");
    expect(s.leases).toHaveLength(0);
    expect(readStopAcknowledgement(s.run.runnerProfileJson)).toMatchObject({ leaseId: null, agent: null });
    expect(readStopRetention(s.run.runnerProfileJson)).toMatchObject({ outcome: "nothing_to_retain", reason: "no_lease" });
    expect(await world.db.issueRecoveryAction.count({ where: { runId: waiting.runId } })).toBe(0);

    // The lease holder is stopped too (and keeps its sandbox), so nothing of this test runs on.
    await stopRun(world.db, { companyId: task.companyId, runId: holder.runId, actor: BOARD });
    await holder.execution;
    expect((await world.state(holder.runId)).run.status).toBe("cancelled");
  });

  it("R-RC-7 a stopped legacy run is pinned and released the same way, but its files are the legacy copy-back's: no file-recovery obligation of the Stop's", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: WORKING_AGENT, adapterConfig: { adapter: "legacy", timeoutSeconds: 120 } });
    const { runId, execution, leaseId } = await startRun(task);
    await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD });
    await execution;
    const s = await world.state(runId);
    expect(s.run).toMatchObject({ status: "cancelled", runtimeMode: "legacy" });
    expect(readStopRetention(s.run.runnerProfileJson)).toMatchObject({ outcome: "pinned", leaseId, actionId: null });
    // The adapter copied the partial file back after the Stop (the legacy protocol): nothing to recover.
    expect(await readFile(path.join(task.hostPath, "partial.txt"), "utf8")).toBe("partial work\n");
    expect(await world.db.issueRecoveryAction.count({ where: { runId, cause: "native_workspace_file_recovery_required" } })).toBe(0);
  });

  it("R-RC-7 a run with an accepted result is not stopped away from its copyback: Stop ends the agent's process and the saved result is copied back", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: WORKING_AGENT });
    const { runId, execution, agentPid } = await startRun(task);
    const run = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    // The agent's finish call (the finish API publishes exactly this way).
    const published = await publishRunResult(world.db, { runId, agentId: run.agentId, dedupeKey: "finish-1", document: JSON.parse(RESULT_IN_REVIEW), source: "finish_api" });
    expect(published.kind).toBe("accepted");

    const answer = await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD });
    expect(answer).toMatchObject({ kind: "finalizing", runId });
    await execution;
    expect(await processGone(agentPid)).toBe(true);
    const s = await world.state(runId);
    expect(s.run.status).toBe("succeeded");
    expect(s.coordinator?.phase).toBe("committed");
    expect(readStopAcknowledgement(s.run.runnerProfileJson)).toBeNull();
    expect(await world.db.issueRecoveryAction.count({ where: { runId } })).toBe(0);
    expect(await readFile(path.join(task.hostPath, "partial.txt"), "utf8")).toBe("partial work\n");
    expect(s.issue.status).toBe("in_review");
  });
});

describe("Stop racing the agent's finish (R-FO-6)", () => {
  /** A sandbox agent that writes its work, then exits on its own once the test drops `go` in its workspace. */
  const FINISHING_AGENT = "printf 'finished work\\n' > work.txt && while [ ! -f go ]; do sleep 0.05; done";

  it("R-FO-6: a finish that commits after the executor's unlocked read of the result and before the Stop's cancellation is finalized, not stopped away into a file-recovery obligation", async () => {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, script: FINISHING_AGENT, files: { "base.txt": "host\n" } });
    const runId = await world.wake(task);
    const mine = (await world.claim(1)).find((r) => r.runId === runId);
    if (!mine) throw new Error("run not claimed");
    // No stop poll while the agent works: the executor reads the Stop only when the agent exits,
    // so the test decides when it sees it.
    const execution = executeRun(world.deps({ stopPollMs: 600_000 }), mine, new AbortController().signal);
    const lease = await waitFor("the sandbox", () => world.db.environmentLease.findFirst({ where: { runId, providerLeaseId: { not: null } } }));
    await waitFor("the agent's work", () => readFile(sandboxFile(lease.providerLeaseId!, "work.txt"), "utf8").then(() => true, () => false));
    expect(await stopRun(world.db, { companyId: task.companyId, runId, actor: BOARD })).toMatchObject({ kind: "stop_requested" });
    const agentId = (await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).agentId;

    // The agent's finish call, held open: its transaction shares the run row (FOR SHARE: the
    // executor's reads and run-event inserts pass, the Stop's cancellation, FOR UPDATE, waits).
    // The agent exits, the executor reads "no accepted result" (unlocked) and cancels; once the
    // cancellation waits for the run row, the finish publishes and commits in front of it.
    await world.db.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM heartbeat_runs WHERE id = ${runId}::uuid FOR SHARE`;
        await writeFile(sandboxFile(lease.providerLeaseId!, "go"), "");
        await waitFor("the Stop's cancellation to wait for the run row", async () => {
          const waiting = await world.db.$queryRaw<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'SELECT id FROM heartbeat_runs WHERE id = %FOR UPDATE'`;
          return (waiting[0]?.n ?? 0) > 0;
        });
        // publishRunResult's own transaction is this one (the finish API's code, run in the held transaction).
        const inHeld = { $transaction: (work: (t: typeof tx) => Promise<unknown>) => work(tx) } as unknown as PrismaClient;
        const published = await publishRunResult(inHeld, { runId, agentId, dedupeKey: "finish-race", document: JSON.parse(RESULT_IN_REVIEW), source: "finish_api" });
        expect(published.kind).toBe("accepted");
      },
      { timeout: 60_000, maxWait: 10_000 },
    );
    await execution;

    // As Stop promises once a result is accepted: the saved result is copied back and applied.
    const s = await world.state(runId);
    expect(s.coordinator).toMatchObject({ phase: "committed", failureCode: null });
    expect(s.run.status).toBe("succeeded");
    expect(readStopAcknowledgement(s.run.runnerProfileJson)).toBeNull();
    expect(await readFile(path.join(task.hostPath, "work.txt"), "utf8")).toBe("finished work\n");
    expect(s.issue.status).toBe("in_review");
    expect(await world.db.issueRecoveryAction.count({ where: { runId } })).toBe(0);
    expect(s.codes).toContain("run.stop_after_result");
  });
});

describe("older acknowledged cancellations (the stop-retention sweep)", () => {
  /** A run that failed on its own (its sandbox stopped and retained), rewritten as a cancellation acknowledged before retention existed. */
  async function historicalCancellation(policy: "ephemeral" | "reuse_by_environment") {
    const task = await world.task({ pluginId: PLAIN_LOCAL_PLUGIN, policy, script: "printf 'old work\\n' > old.txt && exit 3" });
    const runId = await world.runOnce(task);
    const lease = (await world.db.environmentLease.findFirstOrThrow({ where: { runId } }));
    const ack = { schema: "copyback.run-stop-acknowledgement.v1", requestId: crypto.randomUUID(), acknowledgedAt: new Date().toISOString(), by: "executor", controller: null, agent: null, leaseId: lease.id };
    await world.db.$executeRaw`
      UPDATE heartbeat_runs SET status = 'cancelled', error_code = 'run_stopped',
        runner_profile_json = runner_profile_json || jsonb_build_object('stopAcknowledgement', ${JSON.stringify(ack)}::jsonb)
      WHERE id = ${runId}::uuid`;
    return { runId, lease };
  }

  it("R-RC-7 processes a bounded batch, oldest first; a stopped ephemeral source is retained, a reusable released one refused, and neither is touched", async () => {
    const a = await historicalCancellation("ephemeral");
    const b = await historicalCancellation("reuse_by_environment");
    const sweep = stopRetentionSweep({ db: world.db });
    const first = await sweep.due(1);
    expect(first).toHaveLength(1);
    const all = (await sweep.due(100)).map((u) => u.runId);
    expect(all.indexOf(a.runId)).toBeLessThan(all.indexOf(b.runId));

    expect(await sweep.handle({ runId: a.runId })).toBe("retained");
    expect(await sweep.handle({ runId: b.runId })).toBe("refused");
    for (const [{ runId, lease }, outcome, reason] of [
      [a, "retained", "stopped"],
      [b, "refused", "reusable_source_not_active"],
    ] as const) {
      const run = await world.db.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
      expect(readStopRetention(run.runnerProfileJson)).toMatchObject({ outcome, reason, leaseId: lease.id, by: "sweep" });
      // The retained source's record names its file-recovery obligation (one per run: the failed
      // run's own R-FO-3 obligation is kept, not duplicated); a refused one names none.
      const actionId = readStopRetention(run.runnerProfileJson)?.actionId ?? null;
      const fileHolds = await world.db.issueRecoveryAction.findMany({ where: { runId, cause: "native_workspace_file_recovery_required", status: "active" }, select: { id: true } });
      if (outcome === "retained") expect(fileHolds.map((h) => h.id)).toEqual([actionId]);
      else expect(actionId).toBeNull();
      // The lease is exactly as it was: released with its receipt, never destroyed or reused.
      expect(await world.db.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "released", metadata: lease.metadata });
      expect(await readFile(sandboxFile(lease.providerLeaseId!, "old.txt"), "utf8")).toBe("old work\n");
    }
    // Handled once: they leave the due set, and a repeat is idle.
    const after = (await sweep.due(100)).map((u) => u.runId);
    expect(after).not.toContain(a.runId);
    expect(after).not.toContain(b.runId);
    expect(await sweep.handle({ runId: a.runId })).toBe("idle");
  });

  it("R-RC-7 the sweep's due selection can go through its partial index (O(due), not a scan of all runs)", async () => {
    const plan = await world.db.$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL enable_seqscan = off`;
      return tx.$queryRaw<{ "QUERY PLAN": unknown }[]>`
        EXPLAIN (FORMAT JSON) SELECT id AS "runId" FROM heartbeat_runs
        WHERE status = 'cancelled' AND runner_profile_json ? 'stopAcknowledgement' AND NOT (runner_profile_json ? 'stopRetention')
        ORDER BY finished_at NULLS FIRST, id LIMIT 50`;
    });
    expect(JSON.stringify(plan)).toContain("heartbeat_runs_stop_retention_due");
  });
});
