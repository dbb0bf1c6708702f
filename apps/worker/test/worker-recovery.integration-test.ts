// The worker as a real process, SIGKILLed in the middle of a large export:
// the restarted worker opens exactly one unverified-owner hold and starts no provider turn; an
// operator's attestation lets the same run commit the sandbox's exact bytes. Times from restart
// to the hold and from attestation to commit are printed.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import {
  OWNER_UNVERIFIED_CAUSE,
  readOwnerUnverifiedEvidence,
  SYSTEM_ACTOR,
} from "@copyback/core/records";
import { attestOwnerStop } from "@copyback/core/recovery";
import { wakeAgent } from "@copyback/core/runs";
import { bulkTask, hashes, until } from "./bulk-task";
import { useDemoWorkerInstance } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-recovery-");
const { database } = instance;

const startWorker = (extra: Record<string, string> = {}) =>
  instance.startWorker({
    WORKER_POLL_INTERVAL_MS: "100",
    RECONCILE_INTERVAL_MS: "250",
    WORKER_CONCURRENCY: "2",
    ...extra,
  });

describe("a worker killed mid-export", () => {
  it("R-OWN-11, R-ORP-4, R-ATT-3: SIGKILL after workspace.export_started: the restarted worker opens exactly one hold and no provider turn; the attestation commits the sandbox's exact bytes", { timeout: 180_000 }, async () => {
    const prisma = database.prisma();
    // 400 files of 1 MiB of random bytes: an export that takes long enough to be killed inside.
    const { issue, hostPath } = await bulkTask(database.prisma(), "Bulk writer", "Document the motor controller API", 400);

    const first = await startWorker();
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    await until("workspace.export_started", () => prisma.runEvent.findFirst({ where: { runId, code: "workspace.export_started" } }), 120_000, 5);
    first.child.kill("SIGKILL");
    await first.exited;

    const killed = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    expect(killed.status).toBe("running");
    expect((await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).phase).toBe("workspace_finalizing");
    expect(await prisma.workspaceOperation.count({ where: { runId, phase: "workspace_finalize", status: "succeeded" } })).toBe(0);
    const lease = await prisma.environmentLease.findFirstOrThrow({ where: { runId } });
    const sandbox = path.join(instance.instanceRoot(), "sandboxes", lease.providerLeaseId ?? "", "workspace");
    const sandboxHashes = await hashes(path.join(sandbox, "bulk"));
    expect(Object.keys(sandboxHashes)).toHaveLength(400);
    const agentTurnsBefore = await prisma.runEvent.count({ where: { runId, code: "agent.started" } });

    const restartedAt = performance.now();
    const second = await startWorker();
    const action = await until(
      "the unverified-owner hold",
      () => prisma.issueRecoveryAction.findFirst({ where: { runId, cause: OWNER_UNVERIFIED_CAUSE, status: "active" } }),
      60_000,
      20,
    );
    const restartToNoticeMs = performance.now() - restartedAt;
    // A few more passes: still exactly one hold, no provider turn, no new run.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await prisma.issueRecoveryAction.count({ where: { runId } })).toBe(1);
    expect(await prisma.runEvent.count({ where: { runId, code: "agent.started" } })).toBe(agentTurnsBefore);
    expect(await prisma.heartbeatRun.count({ where: { nativeIssueId: issue.id } })).toBe(1);
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");

    const evidence = readOwnerUnverifiedEvidence(action.evidence);
    expect(evidence?.reason).toBe("controller_exited_without_barrier");
    const attestedAt = performance.now();
    const answer = await attestOwnerStop(prisma, {
      companyId: DEMO_COMPANY_ID,
      issueId: issue.id,
      actor: { type: "local_board", id: null },
      actionId: action.id,
      runId,
      ownerToken: evidence?.ownerToken ?? "",
      controllerAndCopybackStopped: true,
      stopEvidence: `worker pid ${killed.controllerPid} and its tar children are gone (ps shows none)`,
    });
    expect(answer).toMatchObject({ status: "attested", runId, leaseIds: [lease.id] });
    await until("the commit", async () => (await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status === "succeeded", 120_000, 20);
    const attestToCommitMs = performance.now() - attestedAt;
    console.log(`[worker recovery] restart -> hold ${restartToNoticeMs.toFixed(0)} ms; attestation -> commit ${attestToCommitMs.toFixed(0)} ms (400 MiB)`);

    expect(await hashes(path.join(hostPath, "bulk"))).toEqual(sandboxHashes);
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: issue.id } })).status).toBe("in_review");
    expect(await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).toMatchObject({ status: "resolved", resolvedByType: "system" });
    expect(await prisma.runEvent.count({ where: { runId, code: "agent.started" } })).toBe(agentTurnsBefore);
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });

  // 120 MiB keeps the copyback in flight well past the SIGTERM (it polls export_started every 5 ms),
  // while a loaded CI machine still gets through it: 300 MiB took 50 s to copy back at load 15,
  // and a CI run once hit the old 180 s timeout with it.
  it("SIGTERM during a finalization: the worker finishes the copyback before it closes the database, clears its receipt and exits 0", { timeout: 300_000 }, async () => {
    const prisma = database.prisma();
    const { issue } = await bulkTask(database.prisma(), "Bulk writer 2", "Investigate the flaky sensor calibration test", 120);
    // No drain time and no grace: only the wait for finalizations in flight keeps the copyback alive.
    const worker = await startWorker({ WORKER_DRAIN_TIMEOUT_MS: "0", WORKER_ABORT_GRACE_MS: "0" });
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    await until("workspace.export_started", () => prisma.runEvent.findFirst({ where: { runId, code: "workspace.export_started" } }), 120_000, 5);
    worker.child.kill("SIGTERM");
    expect(await worker.exitWithin(240_000)).toEqual({ code: 0, signal: null });
    const output = worker.output();
    expect(output).toContain("waiting for finalizations in flight");
    expect(output.indexOf("waiting for finalizations in flight")).toBeLessThan(output.indexOf(`"msg":"worker stopped"`));
    const run = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe("succeeded");
    expect((run.runnerProfileJson as Record<string, unknown>).nativeWorkspaceFinalizationOwner).toBeUndefined();
    expect(await prisma.issueRecoveryAction.count({ where: { runId } })).toBe(0);
  });
});
