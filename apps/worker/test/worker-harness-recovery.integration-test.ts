// End to end on one machine (R-RW-1..5): a worker started with Railway identity variables is
// SIGKILLed mid-copy; its receipt names its deployment. A worker configured with the cloud harness
// (the real apps/harness process, against the Railway emulator) keeps the hold while the
// deployment lives, and once the emulator moves it to REMOVED obtains the signed receipt,
// releases exactly that owner and commits the same run with its exact files: no operator, no new
// run, no provider turn.
import path from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import { OWNER_UNVERIFIED_CAUSE, readOwnerUnverifiedEvidence, SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { RailwayEmulator } from "@copyback/core/test-support/railway/railway-emulator";
import { startHarness, type HarnessChild } from "@copyback/core/test-support/railway/harness-process";
import { bulkTask, hashes, until } from "./bulk-task";
import { useDemoWorkerInstance } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-harness-");
const { database } = instance;

const FLEET_TOKEN = "fleet-token-of-the-tenants-0123456789";
const STACK = { projectId: "proj-e2e", environmentId: "env-e2e", serviceId: "svc-worker" };
const railwayVars = (deploymentId: string) => ({
  RAILWAY_PROJECT_ID: STACK.projectId,
  RAILWAY_ENVIRONMENT_ID: STACK.environmentId,
  RAILWAY_SERVICE_ID: STACK.serviceId,
  RAILWAY_DEPLOYMENT_ID: deploymentId,
});
let railway: RailwayEmulator;
let harness: HarnessChild;
let harnessVars: Record<string, string>;

beforeAll(async () => {
  railway = await new RailwayEmulator("railway-token-of-the-harness").start();
  const signing = await generateKeyPair("Ed25519", { extractable: true });
  harness = await startHarness({
    HARNESS_FLEET_TOKEN: FLEET_TOKEN,
    HARNESS_STACKS: JSON.stringify({ "stack-e2e": STACK }),
    HARNESS_SIGNING_KEY: JSON.stringify(await exportJWK(signing.privateKey)),
    HARNESS_SIGNING_KID: "harness-e2e",
    RAILWAY_API_URL: railway.url,
    RAILWAY_API_TOKEN: "railway-token-of-the-harness",
  });
  harnessVars = {
    COPYBACK_HARNESS_URL: harness.url,
    COPYBACK_HARNESS_FLEET_TOKEN: FLEET_TOKEN,
    COPYBACK_HARNESS_KEYS: JSON.stringify({ keys: [{ ...(await exportJWK(signing.publicKey)), kid: "harness-e2e" }] }),
    COPYBACK_STACK_ID: "stack-e2e",
  };
}, 60_000);

afterAll(async () => {
  await harness?.stop();
  await railway?.stop();
});

describe("a Railway worker killed mid-export, recovered through the cloud harness", () => {
  it("R-RW-1 R-RW-2 R-RW-3 R-RW-5: the receipt names the deployment; live, the hold stays; REMOVED, the same run commits its exact files with no operator and no new run", { timeout: 240_000 }, async () => {
    const prisma = database.prisma();
    const { issue, hostPath } = await bulkTask(prisma, "Railway bulk writer", "Document the motor controller API", 300);

    railway.addDeployment({ id: "dep-first", status: "SUCCESS", ...STACK });
    const first = await instance.startWorker({ WORKER_POLL_INTERVAL_MS: "100", RECONCILE_INTERVAL_MS: "250", ...railwayVars("dep-first") });
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    await until("workspace.export_started", () => prisma.runEvent.findFirst({ where: { runId, code: "workspace.export_started" } }), 120_000, 5);
    first.child.kill("SIGKILL");
    await first.exited;

    // R-RW-1: the killed controller's receipt names its exact deployment.
    const killed = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const receipt = (killed.runnerProfileJson as Record<string, { token: string; platform?: unknown }>).nativeWorkspaceFinalizationOwner;
    expect(receipt?.platform).toEqual({ kind: "railway", ...STACK, deploymentId: "dep-first" });
    const lease = await prisma.environmentLease.findFirstOrThrow({ where: { runId } });
    const sandboxHashes = await hashes(path.join(instance.instanceRoot(), "sandboxes", lease.providerLeaseId ?? "", "workspace", "bulk"));
    const agentTurns = await prisma.runEvent.count({ where: { runId, code: "agent.started" } });

    // The replacement worker (another deployment of the same service) with the harness configured.
    railway.addDeployment({ id: "dep-second", status: "SUCCESS", ...STACK });
    const second = await instance.startWorker({ WORKER_POLL_INTERVAL_MS: "100", RECONCILE_INTERVAL_MS: "250", ...railwayVars("dep-second"), ...harnessVars });
    const action = await until("the unverified-owner hold", () => prisma.issueRecoveryAction.findFirst({ where: { runId, cause: OWNER_UNVERIFIED_CAUSE, status: "active" } }), 60_000, 20);
    // While the old deployment lives, the hold stays and says why.
    await until("the harness's refusal on the hold", async () => {
      const row = await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } });
      return readOwnerUnverifiedEvidence(row.evidence)?.harnessCheck?.code === "deployment_live";
    }, 60_000, 50);
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");
    expect(readOwnerUnverifiedEvidence((await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).evidence)?.attestation).toBeUndefined();

    // Railway removes the killed deployment (every process of it, orphaned tar children included).
    railway.setStatus("dep-first", "REMOVED");
    await until("the commit", async () => (await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status === "succeeded", 120_000, 50);

    expect(await hashes(path.join(hostPath, "bulk"))).toEqual(sandboxHashes);
    const resolved = await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } });
    expect(resolved).toMatchObject({ status: "resolved", resolvedByType: "system" });
    expect(readOwnerUnverifiedEvidence(resolved.evidence)?.attestation).toMatchObject({ ownerToken: receipt?.token, actor: { type: "system" }, proof: { kind: "harness_receipt", kid: "harness-e2e" } });
    expect(await prisma.activityLog.count({ where: { action: "recovery.owner_stop_proven", entityId: action.id } })).toBe(1);
    expect(await prisma.heartbeatRun.count({ where: { nativeIssueId: issue.id } })).toBe(1);
    expect(await prisma.runEvent.count({ where: { runId, code: "agent.started" } })).toBe(agentTurns);
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: issue.id } })).status).toBe("in_review");
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
