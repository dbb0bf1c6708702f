// The lease cleanup sweep with the real local provider: real sandboxes under an
// instance root. A worker that crashed mid-stop leaves its sandbox running with the intent and the
// claim written; after the claim expires, a fresh process's sweep stops it through
// environmentStopLease and the files stay byte for byte. An acquisition whose replies were lost
// left a real sandbox nobody knows the name of; the sweep finds it by the lease id and destroys it.
import { access, mkdtemp, readFile, realpath, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, releaseLeaseByPolicy } from "../../src/leases/index";
import { lostReply } from "../../src/providers/fake/faults";
import { createLocalProvider } from "../../src/providers/local/index";
import type { EnvironmentProvider } from "../../src/providers/types";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { registryOf } from "../leases/lease-fixture";

const db = useTestDatabase();
const prisma = () => db.prisma();
let instanceRoot = "";
let world: { companyId: string; environmentId: string; issueId: string; agentId: string };

beforeAll(async () => {
  instanceRoot = await realpath(await mkdtemp(path.join(os.tmpdir(), "copyback-cleanup-local-")));
  const company = await prisma().company.create({ data: { name: "Cleanup local", issuePrefix: "CLN" } });
  const environment = await prisma().environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "reuse_by_environment" } });
  const agent = await prisma().agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  const issue = await prisma().issue.create({ data: { companyId: company.id, number: 1, identifier: "CLN-1", title: "Task", status: "in_progress" } });
  world = { companyId: company.id, environmentId: environment.id, issueId: issue.id, agentId: agent.id };
});
afterAll(async () => {
  if (instanceRoot) await rm(instanceRoot, { recursive: true, force: true });
});

const local = () => createLocalProvider({ instanceRoot, isolation: "none" });
const exists = (p: string) => access(p).then(() => true, () => false);
const sandboxRoot = (providerLeaseId: string) => path.join(instanceRoot, "sandboxes", providerLeaseId);

async function newRunAndWorkspace() {
  const run = await prisma().heartbeatRun.create({ data: { companyId: world.companyId, agentId: world.agentId, nativeIssueId: world.issueId, status: "running" } });
  const workspace = await prisma().executionWorkspace.create({ data: { companyId: world.companyId, name: `ws-${run.id}`, hostPath: path.join(instanceRoot, "host", run.id) } });
  return { runId: run.id, input: { companyId: world.companyId, runId: run.id, issueId: world.issueId, environmentId: world.environmentId, executionWorkspaceId: workspace.id } };
}

describe("the lease cleanup sweep on the local provider", () => {
  it("R-EX-5 R-SO-2 a stop in flight when the worker crashed: after the claim expires a fresh sweep stops the sandbox by environmentStopLease and its files stay", async () => {
    const { runId, input } = await newRunAndWorkspace();
    const plugin = local();
    const { lease } = await acquireLease(prisma(), registryOf(plugin), { ...input, policy: "reuse_by_environment" });
    const workFile = path.join(sandboxRoot(lease.providerLeaseId!), "workspace", "work.txt");
    await writeFile(workFile, "unexported bytes\n");

    // The crashed worker: its stop request never came back.
    let asked = false;
    const hung: EnvironmentProvider = { ...plugin, stopLease: () => { asked = true; return new Promise(() => undefined); } };
    void releaseLeaseByPolicy(prisma(), registryOf(hung), { leaseId: lease.id, runId, outcome: "committed" });
    for (let i = 0; i < 200 && !asked; i += 1) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(asked).toBe(true);
    expect(await prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: `release:${runId}` });

    const sweep = leaseCleanupSweep({ db: prisma(), registry: registryOf(local()) });
    expect(await sweep.due(10)).toEqual([]);
    await prisma().$executeRaw`UPDATE environment_leases SET cleanup_claimed_until = now() - interval '1 second' WHERE id = ${lease.id}::uuid`;
    const due = await sweep.due(10);
    expect(due.map((u) => u.leaseId)).toEqual([lease.id]);
    expect(await sweep.handle(due[0]!)).toBe("stopped_and_retained");

    const after = await prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after).toMatchObject({ status: "released", cleanupClaimedBy: null, metadata: { sandboxStopAndRetainReceipt: { method: "environmentStopLease", pluginId: "builtin.local", providerLeaseId: lease.providerLeaseId } } });
    expect(await readFile(workFile, "utf8")).toBe("unexported bytes\n");
    // The sweep's stop measured the kept sandbox like a live release's: its workspace's one file.
    expect(after.metadata).toMatchObject({ sandboxSize: { workspaceBytes: 17, workspaceEntries: 1, lowerBound: null } });
  });

  it("an acquisition whose replies were lost left a real sandbox: the sweep names it by the lease id and destroys it", async () => {
    const { input } = await newRunAndWorkspace();
    const plugin = local();
    let made: string | null = null;
    const lossy: EnvironmentProvider = {
      ...plugin,
      acquire: async (request) => {
        const allocation = await plugin.acquire!(request);
        made = allocation.identity.providerLeaseId;
        throw lostReply("acquire");
      },
    };
    await expect(acquireLease(prisma(), registryOf(lossy), { ...input, policy: "ephemeral" })).rejects.toMatchObject({ code: "provider_reply_lost" });
    expect(made).not.toBeNull();
    expect(await exists(sandboxRoot(made!))).toBe(true);
    const [lease] = await prisma().environmentLease.findMany({ where: { executionWorkspaceId: input.executionWorkspaceId } });
    expect(lease).toMatchObject({ status: "pending_cleanup", providerLeaseId: null, metadata: { sandboxDestroy: { reason: "acquire_unconfirmed" } } });

    const sweep = leaseCleanupSweep({ db: prisma(), registry: registryOf(local()) });
    const due = (await sweep.due(10)).filter((u) => u.leaseId === lease!.id);
    expect(await sweep.handle(due[0]!)).toBe("destroyed");
    expect(await exists(sandboxRoot(made!))).toBe(false);
    expect(await prisma().environmentLease.findUniqueOrThrow({ where: { id: lease!.id } })).toMatchObject({ status: "destroyed", providerLeaseId: made });
  });
});
