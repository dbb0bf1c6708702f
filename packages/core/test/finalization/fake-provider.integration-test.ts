// finalizeRun with the built-in fake provider resolved through the real ProviderRegistry: the
// lease's pinned plugin is used (R-EX-6), its fault modes reach the right coordinator states.
import { randomUUID } from "node:crypto";
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
  await acceptResult(world, run.runId);
  return { ...run, handle };
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

  it("R-EX-6 a lease whose plugin is not registered fails without exporting (retryable: the plugin may come back)", async () => {
    const run = await fakeRun({ "unreachable.txt": "no" });
    const empty = { ...deps, registry: new ProviderRegistry() };
    const exportsBefore = fake.calls.filter((c) => c.op === "exportWorkspace").length;
    expect(await finalizeRun(empty, { runId: run.runId })).toMatchObject({ kind: "retryable_failure", code: "provider_plugin_unavailable" });
    expect(fake.calls.filter((c) => c.op === "exportWorkspace")).toHaveLength(exportsBefore);
  });
});
