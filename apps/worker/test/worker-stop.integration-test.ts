// Stop (R-RC-7) with the worker as a real process: a demo agent works in a real local sandbox; a
// Stop arrives while someone else holds the task's row lock, so the worker cancels the run with
// its acknowledgement but leaves the sandbox active (retention deferred), and its own reconciler
// skips the locked task without a write. The worker is then SIGKILLed; after the lock is released
// a restarted worker's startup pass pins the sandbox (stop-only intent) and its lease cleanup stops
// and retains it, the agent's partial file intact.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import { readStopAcknowledgement, readStopRetention, SYSTEM_ACTOR } from "@copyback/core/records";
import { stopRun, wakeAgent } from "@copyback/core/runs";
import { useDemoWorkerInstance } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-stop-");
const { database } = instance;

const startWorker = () =>
  instance.startWorker({
    WORKER_POLL_INTERVAL_MS: "100",
    RECONCILE_INTERVAL_MS: "250",
    WORKER_CONCURRENCY: "2",
  });

async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("Stop with a real worker", () => {
  it("R-RC-7 a lost task lock keeps the stopped run's sandbox active; a restarted worker's startup pass pins it and the stop-only cleanup keeps its files", async () => {
    const prisma = database.prisma();
    const builder = await prisma.agent.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, name: "Builder" } });
    const slow = await prisma.agent.create({
      data: {
        companyId: DEMO_COMPANY_ID,
        name: "Slow builder",
        environmentId: builder.environmentId,
        adapterConfig: { timeoutSeconds: 300 },
        command: ["/bin/sh", "-c", "printf 'partial work\\n' > partial.txt && sleep 300"],
      },
    });
    const issue = await prisma.issue.findFirstOrThrow({ where: { companyId: DEMO_COMPANY_ID, executionWorkspaceId: { not: null }, status: { in: ["todo", "backlog"] } } });
    await prisma.issue.update({ where: { id: issue.id }, data: { assigneeAgentId: slow.id } });

    const first = await startWorker();
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    await until("the agent to start", async () => {
      const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
      return run.status === "running" && typeof (run.runnerProfileJson as Record<string, unknown>).agentProcess === "object";
    }, 60_000);
    const lease = await prisma.environmentLease.findFirstOrThrow({ where: { runId } });
    const partial = path.join(instance.instanceRoot(), "sandboxes", lease.providerLeaseId!, "workspace", "partial.txt");
    await until("the partial file", () => readFile(partial, "utf8").then(() => true, () => false), 30_000);

    // Someone holds the task's row lock for as long as the first worker lives.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked: () => void = () => undefined;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM issues WHERE id = ${issue.id}::uuid FOR UPDATE`;
        locked();
        await held;
      },
      { timeout: 120_000, maxWait: 10_000 },
    );
    await isLocked;
    try {
      expect(await stopRun(prisma, { companyId: DEMO_COMPANY_ID, runId, actor: { type: "user", id: null } })).toMatchObject({ kind: "stop_requested" });
      await until("the run to be cancelled", async () => (await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status === "cancelled", 30_000);
      await until("the deferred retention", async () => (await prisma.runEvent.count({ where: { runId, code: "run.stop_retention_deferred" } })) === 1, 10_000);
      // A few reconciler passes of the first worker: the locked task is skipped, the lease untouched.
      await new Promise((r) => setTimeout(r, 1_500));
      const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
      expect(readStopAcknowledgement(run.runnerProfileJson)).toMatchObject({ by: "executor", leaseId: lease.id });
      expect(readStopRetention(run.runnerProfileJson)).toBeNull();
      expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).status).toBe("active");
      first.child.kill("SIGKILL");
      await first.exited;
    } finally {
      release();
      await holder;
    }
    expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).status).toBe("active");

    // The restarted worker's startup pass (and the ones after it) finish the retention.
    await startWorker();
    const stopped = await until("the sandbox stopped and retained", async () => {
      const row = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
      return row.status === "released" ? row : null;
    }, 60_000);
    const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const retention = readStopRetention(run.runnerProfileJson);
    expect(retention).toMatchObject({ outcome: "pinned", by: "sweep", leaseId: lease.id });
    expect(stopped.metadata).toMatchObject({ sandboxStopAndRetainReceipt: { requestId: retention!.stopIntentRequestId } });
    expect(await readFile(partial, "utf8")).toBe("partial work\n");
    // The board's file-recovery obligation for the agent's unpublished edits, opened with the pin.
    expect(await prisma.issueRecoveryAction.findMany({ where: { runId, status: "active" }, select: { id: true, cause: true } })).toEqual([{ id: retention!.actionId, cause: "native_workspace_file_recovery_required" }]);
    // Nothing reopened the task or started another turn.
    expect(await prisma.heartbeatRun.count({ where: { nativeIssueId: issue.id } })).toBe(1);
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: issue.id } })).status).toBe("in_progress");
  });
});
