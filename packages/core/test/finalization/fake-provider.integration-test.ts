// finalizeRun with the built-in fake provider resolved through the real ProviderRegistry: the
// lease's pinned plugin is used (R-EX-6), its fault modes reach the right coordinator states.
import { randomUUID } from "node:crypto";
import { PassThrough, type Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun, type FinalizeRunDeps } from "../../src/finalization/finalize-run";
import { createFakeProvider, type FakeProvider } from "../../src/providers/fake/fake-provider";
import { applyChanges } from "../../src/providers/fake/virtual-workspace";
import { ProviderRegistry } from "../../src/providers/registry";
import { prepareRunWorkspace } from "../../src/workspace/prepare-run-workspace";
import { acceptResult, buildWorld, claimedRun, readTree, writeTree, type World } from "./finalization-fixture";

const db = useTestDatabase();
let world: World;
let fake: FakeProvider;
let deps: FinalizeRunDeps;
let environmentId: string;

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
  fake = createFakeProvider();
  const registry = new ProviderRegistry();
  registry.register(fake);
  deps = { ...world.deps(), registry };
  const environment = await db.prisma().environment.create({
    data: { companyId: world.companyId, name: "Fake", provider: "fake", pluginId: fake.pluginId },
  });
  environmentId = environment.id;
  await writeTree(world.hostPath, { "base.txt": "base" });
});

afterAll(async () => {
  await world?.cleanup();
});

/** A claimed run on a fake-provider lease, prepared from the host, with an accepted result. */
async function fakeRun(changes: Record<string, string | null>) {
  const run = await claimedRun(world);
  const leaseId = randomUUID();
  const allocation = await fake.acquire!({ companyId: world.companyId, environmentId, leaseId, runId: run.runId, config: {} });
  await db.prisma().environmentLease.create({
    data: {
      id: leaseId,
      companyId: world.companyId,
      environmentId,
      executionWorkspaceId: world.workspaceId,
      runId: run.runId,
      issueId: run.issueId,
      provider: "fake",
      pluginId: fake.pluginId,
      providerLeaseId: allocation.identity.providerLeaseId,
      leasePolicy: "retain_on_failure",
    },
  });
  const handle = { leaseId, pluginId: fake.pluginId, providerLeaseId: allocation.identity.providerLeaseId };
  const prepared = await prepareRunWorkspace({ db: db.prisma(), locks: world.locks }, { runId: run.runId, lease: handle, plugin: fake });
  expect(prepared.descriptor.seed).toEqual(allocation.identity);
  applyChanges(fake.store.get(handle.providerLeaseId)!.workspace, changes);
  const resultId = await acceptResult(world, run.runId);
  return { ...run, handle, resultId };
}

describe("finalizeRun with the fake provider", () => {
  it("R-EX-6 exports through the lease's pinned plugin and commits the sandbox's changes", async () => {
    const run = await fakeRun({ "fake-new.txt": "from the fake sandbox" });
    expect(await finalizeRun(deps, { runId: run.runId })).toMatchObject({ kind: "committed", counts: { written: 1, deleted: 0 } });
    expect((await readTree(world.hostPath))["fake-new.txt"]).toBe("from the fake sandbox");
    expect(fake.calls.filter((c) => c.op === "exportWorkspace" && c.leaseId === run.handle.leaseId)).toHaveLength(1);
  });

  it("R-RR-1 a lost export reply is retried in process and commits", async () => {
    const run = await fakeRun({ "after-lost-reply.txt": "ok" });
    fake.faults.loseReply("exportWorkspace", 1);
    expect((await finalizeRun(deps, { runId: run.runId })).kind).toBe("committed");
    expect(fake.calls.filter((c) => c.op === "exportWorkspace" && c.leaseId === run.handle.leaseId)).toHaveLength(2);
    expect((await readTree(world.hostPath))["after-lost-reply.txt"]).toBe("ok");
  });

  it("R-RR-1 three injected export failures leave the coordinator retryable, with nothing written", async () => {
    const run = await fakeRun({ "never.txt": "no" });
    fake.faults.failTimes("exportWorkspace", 3);
    expect(await finalizeRun(deps, { runId: run.runId })).toMatchObject({ kind: "retryable_failure", code: "provider_fault_injected" });
    const coordinator = await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } });
    expect(coordinator).toMatchObject({ phase: "retryable_failure", failureCode: "provider_fault_injected" });
    expect((await readTree(world.hostPath))["never.txt"]).toBeUndefined();
  });

  it("R-RR-1 a hung export is aborted at the export deadline before any host write and retried; the next try commits", async () => {
    const run = await fakeRun({ "after-hang.txt": "ok" });
    fake.faults.hang("exportWorkspace", 1);
    expect(await finalizeRun({ ...deps, exportTimeoutMs: 1_500 }, { runId: run.runId })).toMatchObject({ kind: "committed" });
    expect(fake.calls.filter((c) => c.op === "exportWorkspace" && c.leaseId === run.handle.leaseId)).toHaveLength(2);
    const retries = await db.prisma().runEvent.findMany({ where: { runId: run.runId, code: "workspace.copyback_retry" } });
    expect(retries.map((e) => (e.payload as { errorCode: string }).errorCode)).toEqual(["provider_export_timeout"]);
    expect((await readTree(world.hostPath))["after-hang.txt"]).toBe("ok");
  });

  it("R-RR-1 an export that hangs on every try ends retryable_failure with next_attempt_at, the accepted result kept and the lock released", async () => {
    const run = await fakeRun({ "never-after-hang.txt": "no" });
    fake.faults.hang("exportWorkspace");
    try {
      expect(await finalizeRun({ ...deps, exportTimeoutMs: 30 }, { runId: run.runId })).toMatchObject({ kind: "retryable_failure", code: "provider_export_timeout" });
    } finally {
      fake.faults.clear("exportWorkspace");
    }
    expect(fake.calls.filter((c) => c.op === "exportWorkspace" && c.leaseId === run.handle.leaseId)).toHaveLength(3);
    const coordinator = await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } });
    expect(coordinator).toMatchObject({ phase: "retryable_failure", failureCode: "provider_export_timeout", resultId: run.resultId });
    expect(coordinator.nextAttemptAt).not.toBeNull();
    expect(await db.prisma().nativeRunResult.findUniqueOrThrow({ where: { id: run.resultId } })).toMatchObject({ schemaStatus: "accepted" });
    expect((await db.prisma().workspaceOperation.findMany({ where: { runId: run.runId } })).map((op) => [op.phase, op.status, op.errorCode])).toEqual([
      ["workspace_prepare", "succeeded", null],
      ["workspace_finalize", "failed", "provider_export_timeout"],
    ]);
    // The ownership lock went with the attempt: the next call is refused by the retry time, not busy.
    expect(await finalizeRun(deps, { runId: run.runId })).toEqual({ kind: "not_finalizable", reason: "retry_not_due" });
    expect((await readTree(world.hostPath))["never-after-hang.txt"]).toBeUndefined();
  });

  it("R-RR-1 an export stream that stops mid-transfer is aborted at the deadline and destroyed", async () => {
    const run = await fakeRun({ "stalled.txt": "no" });
    const stalled: PassThrough[] = [];
    const stalling = {
      ...fake,
      exportWorkspace: async (): Promise<Readable> => {
        const stream = new PassThrough();
        stream.write(Buffer.alloc(512));
        stalled.push(stream);
        return stream;
      },
    };
    const registry = new ProviderRegistry();
    registry.register(stalling);
    expect(await finalizeRun({ ...deps, registry, exportTimeoutMs: 30 }, { runId: run.runId })).toMatchObject({ kind: "retryable_failure", code: "provider_export_timeout" });
    expect(stalled).toHaveLength(3);
    expect(stalled.every((stream) => stream.destroyed)).toBe(true);
    expect((await readTree(world.hostPath))["stalled.txt"]).toBeUndefined();
  });

  it("R-EX-6 a plugin that does not advertise exportWorkspace fails terminally with provider_capability_missing, exporting nothing", async () => {
    const run = await fakeRun({ "no-export.txt": "no" });
    const registry = new ProviderRegistry();
    registry.register({ ...fake, capabilities: new Set([...fake.capabilities].filter((c) => c !== "exportWorkspace")) });
    const exportsBefore = fake.calls.filter((c) => c.op === "exportWorkspace").length;
    expect(await finalizeRun({ ...deps, registry }, { runId: run.runId })).toMatchObject({ kind: "terminal_failure", code: "provider_capability_missing" });
    expect(fake.calls.filter((c) => c.op === "exportWorkspace")).toHaveLength(exportsBefore);
    expect((await readTree(world.hostPath))["no-export.txt"]).toBeUndefined();
  });

  it("a bad export timeout is refused before anything is written", async () => {
    const run = await fakeRun({ "bad-timeout.txt": "no" });
    const before = await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } });
    await expect(finalizeRun({ ...deps, exportTimeoutMs: 0 }, { runId: run.runId })).rejects.toMatchObject({ code: "export_timeout_invalid" });
    expect(await db.prisma().nativeRunFinalization.findUniqueOrThrow({ where: { runId: run.runId } })).toEqual(before);
    expect(await db.prisma().workspaceOperation.count({ where: { runId: run.runId, phase: "workspace_finalize" } })).toBe(0);
  });

  it("R-EX-6 a lease whose plugin is not registered fails without exporting (retryable: the plugin may come back)", async () => {
    const run = await fakeRun({ "unreachable.txt": "no" });
    const empty = { ...deps, registry: new ProviderRegistry() };
    const exportsBefore = fake.calls.filter((c) => c.op === "exportWorkspace").length;
    expect(await finalizeRun(empty, { runId: run.runId })).toMatchObject({ kind: "retryable_failure", code: "provider_plugin_unavailable" });
    expect(fake.calls.filter((c) => c.op === "exportWorkspace")).toHaveLength(exportsBefore);
  });
});
