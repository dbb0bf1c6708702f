// End to end on this machine (issue 22 part 5): a worker started with COPYBACK_WORKER_CGROUP=on
// runs in a cgroup of its own; SIGKILLed mid-copy, its receipt names that group. A replacement
// worker configured with the real harness process (a worker_cgroup stack on this host) keeps the
// hold while a leftover child stays in the dead worker's group (as an orphaned tar would), and
// once the group holds no process obtains the signed receipt, releases exactly that owner and
// commits the same run with its exact files: no operator, no new run, no provider turn.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFile, rmdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_COMPANY_ID } from "@copyback/db";
import { workerCgroupIdentity } from "@copyback/core/platforms";
import { workerCgroupPlace } from "@copyback/core/providers";
import { OWNER_UNVERIFIED_CAUSE, readOwnerUnverifiedEvidence, SYSTEM_ACTOR } from "@copyback/core/records";
import { wakeAgent } from "@copyback/core/runs";
import { startHarness, type HarnessChild } from "@copyback/core/test-support/railway/harness-process";
import { bulkTask, hashes, until } from "./bulk-task";
import { useDemoWorkerInstance } from "./worker-child";

const instance = useDemoWorkerInstance("copyback-worker-cgroup-");
const { database } = instance;

const FLEET_TOKEN = "fleet-token-of-the-tenants-0123456789";
const place = await workerCgroupPlace();
let harness: HarnessChild;
let harnessVars: Record<string, string>;
const groups: string[] = [];
const leftovers: ChildProcess[] = [];

beforeAll(async () => {
  if (!place) return;
  const signing = await generateKeyPair("Ed25519", { extractable: true });
  harness = await startHarness({
    HARNESS_FLEET_TOKEN: FLEET_TOKEN,
    HARNESS_STACKS: JSON.stringify({ "stack-local": { kind: "worker_cgroup", ...place } }),
    HARNESS_SIGNING_KEY: JSON.stringify(await exportJWK(signing.privateKey)),
    HARNESS_SIGNING_KID: "harness-local",
  });
  harnessVars = {
    COPYBACK_HARNESS_URL: harness.url,
    COPYBACK_HARNESS_FLEET_TOKEN: FLEET_TOKEN,
    COPYBACK_HARNESS_KEYS: JSON.stringify({ keys: [{ ...(await exportJWK(signing.publicKey)), kid: "harness-local" }] }),
    COPYBACK_STACK_ID: "stack-local",
  };
}, 60_000);

afterAll(async () => {
  for (const p of leftovers) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  await harness?.stop();
  // The workers' groups, once empty (a group is removed only without processes).
  for (const dir of groups) {
    for (let i = 0; i < 80 && (await rmdir(dir).then(() => false, () => true)); i += 1) await new Promise((r) => setTimeout(r, 25));
  }
});

/** The group a worker process is in (the hierarchy the platform uses), from /proc/<pid>/cgroup. */
async function groupOf(pid: number): Promise<string | undefined> {
  const text = await readFile(`/proc/${pid}/cgroup`, "utf8");
  for (const line of text.split("\n")) {
    const [id, controllers, p] = line.split(":");
    if (place?.version === 2 ? id === "0" && controllers === "" : (controllers ?? "").split(",").includes("pids")) return p;
  }
  return undefined;
}

const skipReason = "this machine lets no process make a cgroup (no writable v1 pids or delegated v2 group)";

describe.skipIf(!place)(`a worker in its own cgroup killed mid-export, recovered through the local harness${place ? "" : ` (skipped: ${skipReason})`}`, () => {
  it("R-RW-1 R-RW-2 R-RW-3: the receipt names the worker's group; a leftover child in it keeps the hold; once the group is empty the same run commits its exact files with no operator and no new run", { timeout: 240_000 }, async () => {
    const prisma = database.prisma();
    const { issue, hostPath } = await bulkTask(prisma, "Cgroup bulk writer", "Document the motor controller API", 300);

    const first = await instance.startWorker({ WORKER_POLL_INTERVAL_MS: "100", RECONCILE_INTERVAL_MS: "250", COPYBACK_WORKER_CGROUP: "on" });
    const firstGroup = await until("the first worker's own group", async () => {
      const p = await groupOf(first.child.pid!);
      return p?.split("/").pop()?.startsWith("copyback-worker-") ? p : null;
    }, 30_000, 20);
    groups.push(path.join(place!.mountPoint, firstGroup));
    const { runId } = await wakeAgent(prisma, { companyId: DEMO_COMPANY_ID, issueId: issue.id, actor: SYSTEM_ACTOR });
    await until("workspace.export_started", () => prisma.runEvent.findFirst({ where: { runId, code: "workspace.export_started" } }), 120_000, 5);
    // A leftover child in the worker's group, kept alive past the kill (as an orphaned tar would be).
    const leftover = spawn("sleep", ["600"], { stdio: "ignore" });
    leftovers.push(leftover);
    await writeFile(path.join(place!.mountPoint, firstGroup, "cgroup.procs"), String(leftover.pid));
    first.child.kill("SIGKILL");
    await first.exited;

    // The killed controller's receipt names exactly its group, on this boot.
    const killed = await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } });
    const receipt = (killed.runnerProfileJson as Record<string, { token: string; platform?: unknown }>).nativeWorkspaceFinalizationOwner;
    const identity = workerCgroupIdentity.parse(receipt?.platform);
    expect(identity).toEqual({ kind: "worker_cgroup", version: place!.version, path: firstGroup, bootId: (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim() });
    const lease = await prisma.environmentLease.findFirstOrThrow({ where: { runId } });
    const sandboxHashes = await hashes(path.join(instance.instanceRoot(), "sandboxes", lease.providerLeaseId ?? "", "workspace", "bulk"));
    const agentTurns = await prisma.runEvent.count({ where: { runId, code: "agent.started" } });

    const second = await instance.startWorker({ WORKER_POLL_INTERVAL_MS: "100", RECONCILE_INTERVAL_MS: "250", COPYBACK_WORKER_CGROUP: "on", ...harnessVars });
    const action = await until("the unverified-owner hold", () => prisma.issueRecoveryAction.findFirst({ where: { runId, cause: OWNER_UNVERIFIED_CAUSE, status: "active" } }), 60_000, 20);
    const secondGroup = await groupOf(second.child.pid!);
    if (secondGroup) groups.unshift(path.join(place!.mountPoint, secondGroup));
    // While a process is left in the dead worker's group, the hold stays and says why.
    await until("the harness's refusal on the hold", async () => {
      const row = await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } });
      return readOwnerUnverifiedEvidence(row.evidence)?.harnessCheck?.code === "deployment_live";
    }, 60_000, 50);
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status).toBe("running");
    expect(readOwnerUnverifiedEvidence((await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } })).evidence)?.attestation).toBeUndefined();

    // The last process of the group ends: nothing of the dead worker runs any more.
    leftover.kill("SIGKILL");
    await once(leftover, "exit");
    await until("the commit", async () => (await prisma.heartbeatRun.findUniqueOrThrow({ where: { id: runId } })).status === "succeeded", 120_000, 50);

    expect(await hashes(path.join(hostPath, "bulk"))).toEqual(sandboxHashes);
    const resolved = await prisma.issueRecoveryAction.findUniqueOrThrow({ where: { id: action.id } });
    expect(resolved).toMatchObject({ status: "resolved", resolvedByType: "system" });
    expect(readOwnerUnverifiedEvidence(resolved.evidence)?.attestation).toMatchObject({
      ownerToken: receipt?.token,
      actor: { type: "system" },
      stopEvidence: expect.stringContaining(`worker cgroup ${firstGroup}`),
      proof: { kind: "harness_receipt", kid: "harness-local" },
    });
    expect(await prisma.activityLog.count({ where: { action: "recovery.owner_stop_proven", entityId: action.id } })).toBe(1);
    expect(await prisma.heartbeatRun.count({ where: { nativeIssueId: issue.id } })).toBe(1);
    expect(await prisma.runEvent.count({ where: { runId, code: "agent.started" } })).toBe(agentTurns);
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: issue.id } })).status).toBe("in_review");
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
  });
});
