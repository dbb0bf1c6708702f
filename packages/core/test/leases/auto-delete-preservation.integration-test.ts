// R-DT-1 on a real PostgreSQL with the fake provider modelling a provider that deletes stopped
// sandboxes on its own (autoDelete: true, as Daytona does): stop-only preservation disables
// auto-delete and reads the provider's record back before it stops; an unavailable or unconfirmed
// policy leaves the cleanup pending through the restart sweep and never falls back to stop or
// delete; the confirmed stop keeps the files even when the provider's retention job runs.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, releaseLeaseByPolicy } from "../../src/leases/index";
import { createFakeProvider, type FakeProvider } from "../../src/providers/fake/index";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { selfIdentity } from "../recovery/recovery-fixture";
import { buildLeaseWorld, registryOf } from "./lease-fixture";

const db = useTestDatabase();
const PLUGIN = "vendor.autodelete";
let world: Awaited<ReturnType<typeof buildLeaseWorld>>;

beforeAll(async () => {
  world = await buildLeaseWorld(db.prisma(), { pluginId: PLUGIN });
});

async function activeLease(plugin: FakeProvider) {
  const workspace = await world.anotherWorkspace(`ws${Math.random().toString(36).slice(2, 8)}`);
  const runId = await world.newRun();
  const acquired = await acquireLease(db.prisma(), registryOf(plugin), world.acquireInput(runId, { policy: "retain_on_failure", executionWorkspaceId: workspace.id }));
  plugin.calls.length = 0;
  return { lease: acquired.lease, runId };
}

const row = (id: string) => db.prisma().environmentLease.findUniqueOrThrow({ where: { id } });
const ops = (plugin: FakeProvider) => plugin.calls.map((c) => c.op);

describe("stop-only preservation on a provider with auto-delete (R-DT-1)", () => {
  it("R-DT-1 disables auto-delete and reads the record back before it stops; the stopped sandbox then survives the provider's retention job", async () => {
    const plugin = createFakeProvider({ pluginId: PLUGIN, autoDelete: true });
    expect(plugin.capabilities.has("autoDeletePolicy")).toBe(true);
    const { lease, runId } = await activeLease(plugin);
    expect(plugin.store.get(lease.providerLeaseId!)?.autoDelete).toBe("enabled");
    const outcome = await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" });
    expect(outcome).toMatchObject({ kind: "stopped_and_retained", receipt: { method: "environmentStopLease", pluginId: PLUGIN } });
    expect(ops(plugin)).toEqual(["disableAutoDelete", "readAutoDeletePolicy", "stopLease"]);
    expect(plugin.expireStopped()).toEqual([]);
    expect(plugin.store.get(lease.providerLeaseId!)).toMatchObject({ state: "stopped", autoDelete: "disabled" });
    expect((await row(lease.id)).status).toBe("released");
  });

  it("R-DT-1 an unconfirmed policy (the record still says enabled) leaves cleanup pending: no stop, no destroy, through the restart sweep; once confirmed the stop happens", async () => {
    const plugin = createFakeProvider({ pluginId: PLUGIN, autoDelete: true });
    const { lease, runId } = await activeLease(plugin);
    plugin.faults.ignoredAutoDelete(2);
    const first = await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" });
    expect(first).toMatchObject({ kind: "pending_cleanup", code: "auto_delete_unconfirmed" });
    expect(ops(plugin)).toEqual(["disableAutoDelete", "readAutoDeletePolicy"]);
    expect(plugin.store.get(lease.providerLeaseId!)).toMatchObject({ state: "running", autoDelete: "enabled" });
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1, metadata: { failure: { code: "auto_delete_unconfirmed" }, sandboxStopAndRetain: { pluginId: PLUGIN } } });

    // A restarted controller's sweep: the same rule, still unconfirmed, still no stop or destroy.
    plugin.calls.length = 0;
    await db.prisma().environmentLease.update({ where: { id: lease.id }, data: { nextCleanupAt: new Date(Date.now() - 1000) } });
    const sweep = leaseCleanupSweep({ db: db.prisma(), registry: registryOf(plugin), controller: await selfIdentity() });
    const unit = (await sweep.due(500)).find((u) => sweep.idOf(u) === lease.id);
    expect(unit).toBeDefined();
    await sweep.handle(unit!);
    expect(ops(plugin)).toEqual(["disableAutoDelete", "readAutoDeletePolicy"]);
    expect(plugin.calls.map((c) => c.op)).not.toContain("destroy");
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 2 });
    expect(plugin.store.has(lease.providerLeaseId!)).toBe(true);

    // The fault is spent: the next attempt confirms and stops.
    plugin.calls.length = 0;
    await db.prisma().environmentLease.update({ where: { id: lease.id }, data: { nextCleanupAt: new Date(Date.now() - 1000) } });
    const again = (await sweep.due(500)).find((u) => sweep.idOf(u) === lease.id);
    await sweep.handle(again!);
    expect(ops(plugin)).toEqual(["disableAutoDelete", "readAutoDeletePolicy", "stopLease"]);
    expect((await row(lease.id)).status).toBe("released");
  });

  it("R-DT-1 an unavailable policy (disabling or reading it back fails) leaves cleanup pending and never falls back to stop or delete", async () => {
    for (const op of ["disableAutoDelete", "readAutoDeletePolicy"] as const) {
      const plugin = createFakeProvider({ pluginId: PLUGIN, autoDelete: true });
      const { lease, runId } = await activeLease(plugin);
      plugin.faults.failTimes(op, 1);
      const outcome = await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" });
      expect(outcome).toMatchObject({ kind: "pending_cleanup", code: "auto_delete_failed" });
      expect(ops(plugin)).not.toContain("stopLease");
      expect(ops(plugin)).not.toContain("destroy");
      expect(plugin.store.get(lease.providerLeaseId!)?.state).toBe("running");
      expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", releasedAt: null });
    }
  });

  it("R-DT-1 a plugin that advertises the policy without its operations gets neither stop nor destroy", async () => {
    const base = createFakeProvider({ pluginId: PLUGIN, autoDelete: true });
    const { lease, runId } = await activeLease(base);
    const broken: FakeProvider = { ...base, disableAutoDelete: undefined };
    const outcome = await releaseLeaseByPolicy(db.prisma(), registryOf(broken), { leaseId: lease.id, runId, outcome: "failed" });
    expect(outcome).toMatchObject({ kind: "pending_cleanup", code: "provider_capability_missing" });
    expect(ops(base)).toEqual([]);
    expect((await row(lease.id)).cleanupAttempts).toBe(0);
  });

  it("R-DT-1 providers without auto-delete (local, the built-in fake) are stopped as before, with no policy calls", async () => {
    const plugin = createFakeProvider({ pluginId: PLUGIN });
    expect(plugin.capabilities.has("autoDeletePolicy")).toBe(false);
    const { lease, runId } = await activeLease(plugin);
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).resolves.toMatchObject({ kind: "stopped_and_retained" });
    expect(ops(plugin)).toEqual(["stopLease"]);
  });
});
