// finalizeRun through the fake provider's delta export (createFakeProvider({
// exportDelta: true })), the fallback to the full export when the host refuses the delta, the
// retry when the provider fails it, and a plugin without the capability (the full export only).
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { finalizeRun, type FinalizeRunDeps } from "../../src/finalization/finalize-run";
import { createFakeProvider, type FakeProvider } from "../../src/providers/fake/fake-provider";
import { applyChanges, type FakeFileChange } from "../../src/providers/fake/virtual-workspace";
import { ProviderRegistry } from "../../src/providers/registry";
import { prepareRunWorkspace } from "../../src/workspace/prepare-run-workspace";
import { acceptResult, buildWorld, claimedRun, readTree, writeTree, type World } from "./finalization-fixture";

const db = useTestDatabase();
let world: World;
let delta: FakeProvider;
let plain: FakeProvider;
let deps: FinalizeRunDeps;
const environments = new Map<string, string>();

beforeAll(async () => {
  world = await buildWorld(db.prisma(), db.url());
  delta = createFakeProvider({ pluginId: "test.fake-delta", exportDelta: true });
  plain = createFakeProvider({ pluginId: "test.fake-plain" });
  const registry = new ProviderRegistry();
  registry.register(delta);
  registry.register(plain);
  deps = { ...world.deps(), registry };
  for (const fake of [delta, plain]) {
    const environment = await db.prisma().environment.create({ data: { companyId: world.companyId, name: fake.pluginId, provider: "fake", pluginId: fake.pluginId } });
    environments.set(fake.pluginId, environment.id);
  }
  await writeTree(world.hostPath, { "base.txt": "base", "doomed.txt": "doomed", "dir/kept.txt": "kept" });
});

afterAll(async () => {
  await world?.cleanup();
});

async function fakeRun(fake: FakeProvider, changes: Record<string, FakeFileChange>) {
  const run = await claimedRun(world);
  const leaseId = randomUUID();
  const environmentId = environments.get(fake.pluginId) as string;
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
  await prepareRunWorkspace({ db: db.prisma(), locks: world.locks }, { runId: run.runId, lease: handle, plugin: fake });
  applyChanges(fake.store.get(handle.providerLeaseId)!.workspace, changes);
  await acceptResult(world, run.runId);
  return { ...run, handle };
}

const callsOf = (fake: FakeProvider, leaseId: string) => fake.calls.filter((c) => c.leaseId === leaseId).map((c) => c.op).filter((op) => op === "exportDelta" || op === "exportWorkspace" || op === "salvageExport");
async function events(runId: string, code: string) {
  const rows = await db.prisma().runEvent.findMany({ where: { runId, code }, orderBy: { createdAt: "asc" } });
  return rows.map((row) => row.payload as Record<string, unknown>);
}

describe("finalizeRun through the fake provider's delta export", () => {
  it("R-LK-6 commits a new file, an edit, a delete and a symlink through the delta alone; the full export is never asked for", async () => {
    const run = await fakeRun(delta, { "new.txt": "new", "base.txt": "base edited", "doomed.txt": null, link: { symlink: "new.txt" } });
    expect(await finalizeRun(deps, { runId: run.runId })).toMatchObject({ kind: "committed", counts: { written: 3, deleted: 1 } });
    expect(callsOf(delta, run.handle.leaseId)).toEqual(["exportDelta"]);
    expect(await events(run.runId, "workspace.exported")).toEqual([expect.objectContaining({ path: "delta", changed: 3, removed: 1, statCache: "used", hashedFiles: 2, try: 1 })]);
    expect(await readTree(world.hostPath)).toEqual({ "base.txt": "base edited", dir: null, "dir/kept.txt": "kept", link: "->new.txt", "new.txt": "new" });
  });

  it("R-RR-1 a delta the host refuses (corruptDelta) falls back to the full export in the same try and commits exactly", async () => {
    const run = await fakeRun(delta, { "dir/kept.txt": "kept, edited", "second.txt": "second" });
    delta.faults.corruptDelta(1);
    expect(await finalizeRun(deps, { runId: run.runId })).toMatchObject({ kind: "committed", counts: { written: 2, deleted: 0 } });
    expect(callsOf(delta, run.handle.leaseId)).toEqual(["exportDelta", "exportWorkspace"]);
    expect(await events(run.runId, "workspace.delta_fallback")).toEqual([expect.objectContaining({ reason: "provider_delta_mismatch", try: 1 })]);
    expect(await events(run.runId, "workspace.exported")).toEqual([expect.objectContaining({ path: "full", fallbackFrom: "provider_delta_mismatch", try: 1 })]);
    expect(await events(run.runId, "workspace.copyback_retry")).toEqual([]);
    expect(await readTree(world.hostPath)).toEqual({ "base.txt": "base edited", dir: null, "dir/kept.txt": "kept, edited", link: "->new.txt", "new.txt": "new", "second.txt": "second" });
  });

  it("R-RR-1 an unchanged delta the host refuses (an archive sent although nothing changed) falls back too; nothing is written", async () => {
    const run = await fakeRun(delta, {});
    delta.faults.corruptDelta(1);
    expect(await finalizeRun(deps, { runId: run.runId })).toMatchObject({ kind: "committed", counts: { written: 0, deleted: 0, unchanged: true } });
    expect(callsOf(delta, run.handle.leaseId)).toEqual(["exportDelta", "exportWorkspace"]);
    expect(await events(run.runId, "workspace.exported")).toEqual([expect.objectContaining({ path: "full", fallbackFrom: "provider_delta_mismatch" })]);
  });

  it("R-RR-1 a delta export the provider fails is a failed try before any host write; the retry exports a delta again", async () => {
    const run = await fakeRun(delta, { "after-retry.txt": "yes" });
    delta.faults.failTimes("exportDelta", 1);
    expect(await finalizeRun(deps, { runId: run.runId })).toMatchObject({ kind: "committed", counts: { written: 1 } });
    expect(callsOf(delta, run.handle.leaseId)).toEqual(["exportDelta", "exportDelta"]);
    expect(await events(run.runId, "workspace.copyback_retry")).toEqual([expect.objectContaining({ try: 1, errorCode: "provider_fault_injected" })]);
    expect(await events(run.runId, "workspace.exported")).toEqual([expect.objectContaining({ path: "delta", try: 2 })]);
    expect((await readTree(world.hostPath))["after-retry.txt"]).toBe("yes");
  });

  it("R-UA-2 a delta whose manifest holds an unsafe link falls back to the full export, whose salvage leaves the link out", async () => {
    const run = await fakeRun(delta, { "escape": { symlink: "/etc/passwd" }, "safe.txt": "safe" });
    expect(await finalizeRun(deps, { runId: run.runId })).toMatchObject({ kind: "committed" });
    expect(callsOf(delta, run.handle.leaseId)).toEqual(["exportDelta", "exportWorkspace", "salvageExport"]);
    expect(await events(run.runId, "workspace.delta_fallback")).toEqual([expect.objectContaining({ reason: "unsafe_archive" })]);
    const tree = await readTree(world.hostPath);
    expect(tree["safe.txt"]).toBe("safe");
    expect(tree.escape).toBeUndefined();
  });

  it("R-EX-6 a plugin without exportDelta is exported in full, and exportDelta is never called", async () => {
    expect(plain.capabilities.has("exportDelta")).toBe(false);
    const run = await fakeRun(plain, { "plain.txt": "plain" });
    expect(await finalizeRun(deps, { runId: run.runId })).toMatchObject({ kind: "committed", counts: { written: 1 } });
    expect(callsOf(plain, run.handle.leaseId)).toEqual(["exportWorkspace"]);
    expect(await events(run.runId, "workspace.delta_fallback")).toEqual([]);
    expect(await events(run.runId, "workspace.exported")).toEqual([expect.objectContaining({ path: "full", fallbackFrom: null, try: 1 })]);
    expect((await readTree(world.hostPath))["plain.txt"]).toBe("plain");
  });

  it("a bad fault count for corruptDelta is refused", () => {
    expect(() => delta.faults.corruptDelta(0)).toThrow(expect.objectContaining({ code: "fake_fault_invalid" }));
  });
});
