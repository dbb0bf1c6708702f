// Retained sandboxes show their size where the provider tells, on a real
// PostgreSQL: a failed run's real local sandbox, stopped and retained by the ordinary release, is
// measured after its stop was recorded and listed with the exact bytes and entries of its
// workspace (a link to a large file outside is not followed) and of the whole sandbox; a provider
// without `measureSandbox` lists null; a failed or hung measurement leaves the stop recorded and
// records nothing; a measurement cut by its budget is listed as a lower bound; a reused sandbox
// loses its size with its stop receipt.
import { lstat, mkdir, mkdtemp, readdir, realpath, rm, symlink, truncate, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, LEASE_METADATA_KEYS, readStopReceipt, releaseLeaseByPolicy } from "../../src/leases/index";
import { recordRetainedSandboxSize } from "../../src/leases/sandbox-size";
import { createFakeProvider } from "../../src/providers/fake/index";
import { createLocalProvider } from "../../src/providers/local/index";
import { listRetainedSandboxes } from "../../src/sandboxes/list-retained";
import { buildLeaseWorld, registryOf } from "../leases/lease-fixture";

const db = useTestDatabase();
const prisma = () => db.prisma();
let instanceRoot = "";
let local: { companyId: string; environmentId: string; issueId: string; agentId: string; workspaceId: string };

beforeAll(async () => {
  instanceRoot = await realpath(await mkdtemp(path.join(os.tmpdir(), "copyback-size-")));
  const company = await prisma().company.create({ data: { name: "Sizes", issuePrefix: "SIZ" } });
  const environment = await prisma().environment.create({ data: { companyId: company.id, name: "local", provider: "local", pluginId: "builtin.local", defaultLeasePolicy: "ephemeral" } });
  const agent = await prisma().agent.create({ data: { companyId: company.id, name: "Builder", command: ["/bin/true"], environmentId: environment.id } });
  const issue = await prisma().issue.create({ data: { companyId: company.id, number: 1, identifier: "SIZ-1", title: "Task", status: "in_progress" } });
  const workspace = await prisma().executionWorkspace.create({ data: { companyId: company.id, name: "ws", hostPath: path.join(instanceRoot, "host") } });
  local = { companyId: company.id, environmentId: environment.id, issueId: issue.id, agentId: agent.id, workspaceId: workspace.id };
});
afterAll(async () => {
  if (instanceRoot) await rm(instanceRoot, { recursive: true, force: true });
});

const localProvider = () => createLocalProvider({ instanceRoot, isolation: "none" });
const sandboxRoot = (providerLeaseId: string) => path.join(instanceRoot, "sandboxes", providerLeaseId);

/** An independent count (recursive lstat): regular files' bytes and every entry below `dir`. */
async function du(dir: string): Promise<{ bytes: number; entries: number }> {
  let bytes = 0;
  let entries = 0;
  for (const name of await readdir(dir)) {
    const stats = await lstat(path.join(dir, name));
    entries += 1;
    if (stats.isFile()) bytes += stats.size;
    if (stats.isDirectory()) {
      const below = await du(path.join(dir, name));
      bytes += below.bytes;
      entries += below.entries;
    }
  }
  return { bytes, entries };
}

/** A failed run's local lease holding known files, released by its policy (stop and retain). */
async function failedLocalRun(plugin = localProvider()) {
  const run = await prisma().heartbeatRun.create({ data: { companyId: local.companyId, agentId: local.agentId, nativeIssueId: local.issueId, status: "running" } });
  const { lease } = await acquireLease(prisma(), registryOf(plugin), { companyId: local.companyId, runId: run.id, issueId: local.issueId, environmentId: local.environmentId, executionWorkspaceId: local.workspaceId, policy: "ephemeral" });
  const workspace = path.join(sandboxRoot(lease.providerLeaseId!), "workspace");
  await mkdir(path.join(workspace, "src"));
  await writeFile(path.join(workspace, "src", "main.ts"), Buffer.alloc(4_096, 97));
  await writeFile(path.join(workspace, "notes.md"), "unexported work\n");
  // A link to a large file outside the sandbox: a link is an entry, never its target's bytes.
  const outside = path.join(instanceRoot, `outside-${lease.id}.bin`);
  await writeFile(outside, "");
  await truncate(outside, 256 * 1024 * 1024);
  await symlink(outside, path.join(workspace, "big"));
  await prisma().heartbeatRun.update({ where: { id: run.id }, data: { status: "failed" } });
  return { run, lease, workspace, plugin };
}

async function listed(leaseId: string) {
  const { sandboxes } = await listRetainedSandboxes(prisma(), { limit: 500 });
  const row = sandboxes.find((s) => s.leaseId === leaseId);
  expect(row).toBeDefined();
  return row!;
}

describe("retained sandbox sizes", () => {
  it("a failed run's local sandbox, stopped and retained, lists the exact size of its known contents; the link to a large file outside is not followed", async () => {
    const { run, lease, workspace } = await failedLocalRun();
    const before = Date.now();
    const outcome = await releaseLeaseByPolicy(prisma(), registryOf(localProvider()), { leaseId: lease.id, runId: run.id, outcome: "failed" });
    expect(outcome.kind).toBe("stopped_and_retained");

    const row = await listed(lease.id);
    const whole = await du(sandboxRoot(lease.providerLeaseId!));
    expect(row.stopped).toBe(true);
    // src, src/main.ts, notes.md, big (the link): 4,096 + 16 bytes
    expect(row.size).toMatchObject({ workspaceBytes: 4_112, workspaceEntries: 4, bytes: whole.bytes, entries: whole.entries, lowerBound: null });
    expect(row.sizeBytes).toBe(whole.bytes);
    expect(row.sizeBytes!).toBeLessThan(1024 * 1024);
    expect(row.size!.measuredAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(await du(workspace)).toEqual({ bytes: 4_112, entries: 4 });

    // The size is bound to the stop it measured.
    const stored = await prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    const receipt = readStopReceipt(stored.metadata);
    expect(receipt.kind).toBe("present");
    expect((stored.metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.sandboxSize]).toMatchObject({
      schema: "copyback.sandbox-size.v1",
      pluginId: "builtin.local",
      providerLeaseId: lease.providerLeaseId,
      stopRequestId: receipt.kind === "present" ? receipt.value.requestId : "",
    });
  });

  it("a measurement cut short by its budget is listed as a lower bound", async () => {
    const { run, lease } = await failedLocalRun();
    // A provider without the capability for the release; then measured with a tiny entry budget.
    const plain = localProvider();
    const withoutMeasure = { ...plain, capabilities: new Set([...plain.capabilities].filter((c) => c !== "measureSandbox")) };
    expect((await releaseLeaseByPolicy(prisma(), registryOf(withoutMeasure), { leaseId: lease.id, runId: run.id, outcome: "failed" })).kind).toBe("stopped_and_retained");
    expect((await listed(lease.id)).sizeBytes).toBeNull();

    const stored = await prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    const receipt = readStopReceipt(stored.metadata);
    if (receipt.kind !== "present") throw new Error("no receipt");
    const recorded = await recordRetainedSandboxSize(prisma(), plain, stored, receipt.value, { budget: { timeMs: 5_000, entries: 3 } });
    expect(recorded).toMatchObject({ lowerBound: "entry_budget", sandboxEntries: 3 });
    expect((await listed(lease.id)).size).toMatchObject({ entries: 3, lowerBound: "entry_budget" });
  });

  it("a provider without measureSandbox lists size unknown (null)", async () => {
    const world = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const runId = await world.newRun();
    const { lease } = await acquireLease(prisma(), registryOf(plugin), world.acquireInput(runId));
    await prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "failed" } });
    expect((await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).kind).toBe("stopped_and_retained");
    expect(plugin.calls.map((c) => c.op)).not.toContain("measureSandbox");
    const row = await listed(lease.id);
    expect(row).toMatchObject({ stopped: true, sizeBytes: null, size: null });
  });

  it("a failed measurement leaves the stop recorded and records nothing; a hung one is abandoned after its budget", async () => {
    const world = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider({ measureSandbox: true });
    const runId = await world.newRun();
    const { lease } = await acquireLease(prisma(), registryOf(plugin), world.acquireInput(runId));
    await prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "failed" } });
    plugin.faults.failTimes("measureSandbox", 1);
    const outcome = await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" });
    expect(outcome.kind).toBe("stopped_and_retained");
    expect(plugin.calls.map((c) => c.op).slice(-2)).toEqual(["stopLease", "measureSandbox"]);
    const stored = await prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(stored.status).toBe("released");
    expect(readStopReceipt(stored.metadata).kind).toBe("present");
    expect(stored.metadata as Record<string, unknown>).not.toHaveProperty(LEASE_METADATA_KEYS.sandboxSize);
    expect(await listed(lease.id)).toMatchObject({ stopped: true, sizeBytes: null });

    plugin.faults.hang("measureSandbox");
    const receipt = readStopReceipt(stored.metadata);
    if (receipt.kind !== "present") throw new Error("no receipt");
    const started = Date.now();
    expect(await recordRetainedSandboxSize(prisma(), plugin, stored, receipt.value, { budget: { timeMs: 50, entries: 10 } })).toBeNull();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toEqual(stored);
  });

  it("the fake provider tells its size; a reuse consumes it with the stop receipt", async () => {
    const world = await buildLeaseWorld(prisma(), { defaultLeasePolicy: "reuse_by_environment" });
    const plugin = createFakeProvider({ measureSandbox: true, script: () => ({ files: { "a.txt": "hello" } }) });
    const runId = await world.newRun();
    const { lease, handle } = await acquireLease(prisma(), registryOf(plugin), world.acquireInput(runId));
    await plugin.exec!(handle, { argv: ["agent"], env: {}, timeoutMs: 1_000 });
    await prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "failed" } });
    expect((await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).kind).toBe("stopped_and_retained");
    expect((await listed(lease.id)).size).toMatchObject({ workspaceBytes: 5, workspaceEntries: 1, lowerBound: null });

    // Once its run is no longer failed-uncommitted the sandbox is reusable; the reuse drops the size.
    await prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "succeeded" } });
    const next = await world.newRun();
    const reused = await acquireLease(prisma(), registryOf(plugin), world.acquireInput(next));
    expect(reused.reused).toBe(true);
    const after = await prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.metadata as Record<string, unknown>).not.toHaveProperty(LEASE_METADATA_KEYS.sandboxSize);
  });
});
