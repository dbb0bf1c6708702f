// The worker as a real process on a Daytona environment (the real plugin in the worker, the
// emulator in this test process as its endpoint, configured only here: never registered as a
// provider), SIGKILLed in the middle of the delta export: the restarted worker opens exactly one
// unverified-owner hold and starts no provider turn; the operator's attestation lets the same run
// commit the Daytona sandbox's exact bytes.
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import { OWNER_UNVERIFIED_CAUSE, readOwnerUnverifiedEvidence, SYSTEM_ACTOR } from "@copyback/core/records";
import { attestOwnerStop } from "@copyback/core/recovery";
import { wakeAgent } from "@copyback/core/runs";
import { startDaytonaEmulator, type DaytonaEmulator } from "@copyback/core/test-support/daytona/emulator";
import { bulkTask, hashes, until } from "./bulk-task";
import { useDemoWorkerInstance } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-daytona-");
const { database } = instance;
const KEY_VARIABLE = "DAYTONA_WORKER_TEST_KEY";
let emulator: DaytonaEmulator;
let emulatorRoot = "";

beforeAll(async () => {
  emulatorRoot = path.join(instance.instanceRoot(), "daytona-emulator");
  emulator = await startDaytonaEmulator({ root: emulatorRoot });
});
afterAll(async () => {
  await emulator?.close();
});

const startWorker = () =>
  instance.startWorker({ WORKER_POLL_INTERVAL_MS: "100", RECONCILE_INTERVAL_MS: "250", WORKER_CONCURRENCY: "2", [KEY_VARIABLE]: emulator.apiKey });

describe("a worker on Daytona killed mid-export", () => {
  it("R-OWN-11 R-ATT-3 SIGKILL after workspace.export_started on a Daytona sandbox: the restarted worker opens exactly one hold and no provider turn; the attestation commits the sandbox's exact bytes", { timeout: 240_000 }, async () => {
    const prisma = database.prisma();
    const environment = await prisma.environment.create({
      data: { companyId: DEMO_COMPANY_ID, name: "daytona-emulator", provider: "daytona", pluginId: "builtin.daytona", defaultLeasePolicy: "ephemeral", config: { apiUrl: emulator.apiUrl, apiKeyEnv: KEY_VARIABLE } },
    });
    // 150 files of 1 MiB of random bytes: a delta export that takes long enough to be killed inside.
    const { issue, hostPath } = await bulkTask(prisma, "Daytona bulk writer", "Document the motor controller API", 150, environment.id);

    const first = await startWorker();
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    await until("workspace.export_started", () => prisma.runEvent.findFirst({ where: { runId, code: "workspace.export_started" } }), 180_000, 5);
    first.child.kill("SIGKILL");
    await first.exited;

    const killed = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    expect(killed.status).toBe("running");
    expect((await prisma.nativeRunFinalization.findUniqueOrThrow({ where: { runId } })).phase).toBe("workspace_finalizing");
    expect(await prisma.workspaceOperation.count({ where: { runId, phase: "workspace_finalize", status: "succeeded" } })).toBe(0);
    const lease = await prisma.environmentLease.findFirstOrThrow({ where: { runId } });
    expect(lease.pluginId).toBe("builtin.daytona");
    const sandboxId = /^daytona:([^?]+)/.exec(lease.providerLeaseId ?? "")?.[1] ?? "";
    const sandboxHashes = await hashes(path.join(emulatorRoot, sandboxId, "copyback", "workspace", "bulk"));
    expect(Object.keys(sandboxHashes)).toHaveLength(150);
    const agentTurnsBefore = await prisma.runEvent.count({ where: { runId, code: "agent.started" } });

    const second = await startWorker();
    const action = await until("the unverified-owner hold", () => prisma.issueRecoveryAction.findFirst({ where: { runId, cause: OWNER_UNVERIFIED_CAUSE, status: "active" } }), 60_000, 20);
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await prisma.issueRecoveryAction.count({ where: { runId } })).toBe(1);
    expect(await prisma.runEvent.count({ where: { runId, code: "agent.started" } })).toBe(agentTurnsBefore);
    expect(await prisma.heartbeatRun.count({ where: { nativeIssueId: issue.id } })).toBe(1);
    // The held sandbox is still there on Daytona, not deleted behind the hold.
    expect(emulator.sandbox(sandboxId).state).not.toBe("destroyed");

    const evidence = readOwnerUnverifiedEvidence(action.evidence);
    expect(evidence?.reason).toBe("controller_exited_without_barrier");
    const answer = await attestOwnerStop(prisma, {
      companyId: DEMO_COMPANY_ID,
      issueId: issue.id,
      actor: { type: "local_board", id: null },
      actionId: action.id,
      runId,
      ownerToken: evidence?.ownerToken ?? "",
      controllerAndCopybackStopped: true,
      stopEvidence: `worker pid ${killed.controllerPid} is gone (ps shows none); the Daytona download it held was cut with it`,
    });
    expect(answer).toMatchObject({ status: "attested", runId, leaseIds: [lease.id] });
    await until("the commit", async () => (await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status === "succeeded", 150_000, 20);

    expect(await hashes(path.join(hostPath, "bulk"))).toEqual(sandboxHashes);
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: issue.id } })).status).toBe("in_review");
    expect(await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).toMatchObject({ status: "resolved", resolvedByType: "system" });
    expect(await prisma.runEvent.count({ where: { runId, code: "agent.started" } })).toBe(agentTurnsBefore);
    const exported = await prisma.runEvent.findMany({ where: { runId, code: "workspace.exported" } });
    expect(exported.map((e) => (e.payload as { path?: string }).path)).toEqual(["delta"]);
    // The ephemeral sandbox is destroyed only after the exact commit.
    await until("the ephemeral sandbox's destruction", async () => (await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).status === "destroyed", 30_000, 20);
    expect(() => emulator.sandbox(sandboxId)).toThrow();
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
