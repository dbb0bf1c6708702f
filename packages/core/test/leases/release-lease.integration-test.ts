// releaseLeaseByPolicy against a real PostgreSQL with the built-in fake provider: destroy after a
// commit (its intent written first, retried, and left pending_cleanup when unconfirmed),
// stop-and-retain with the v2 intent written first (R-SO-1), a confirmed `builtin.stopLease`
// receipt releases (R-SO-2, R-SO-3), and every way a stop cannot be proven stays pending_cleanup
// without release or destroy (R-EX-6).
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, CLEANUP_CLAIM_MS, DESTROY_INTENT_SCHEMA, releaseLeaseByPolicy, STOP_INTENT_SCHEMA, type LeasePolicy } from "../../src/leases/index";
import { createFakeProvider, type FakeProvider } from "../../src/providers/fake/index";
import { PROVIDER_CAPABILITIES } from "../../src/providers/types";
import { buildLeaseWorld, registryOf } from "./lease-fixture";

const db = useTestDatabase();
let world: Awaited<ReturnType<typeof buildLeaseWorld>>;

beforeAll(async () => {
  world = await buildLeaseWorld(db.prisma());
});

/** An active lease of `policy` on its own workspace (so ephemeral leases do not collide). */
async function activeLease(policy: LeasePolicy, plugin: FakeProvider = createFakeProvider()) {
  const workspace = await world.anotherWorkspace(`ws${Math.random().toString(36).slice(2, 8)}`);
  const runId = await world.newRun();
  const acquired = await acquireLease(db.prisma(), registryOf(plugin), world.acquireInput(runId, { policy, executionWorkspaceId: workspace.id }));
  plugin.calls.length = 0;
  return { lease: acquired.lease, runId, plugin };
}

const row = (id: string) => db.prisma().environmentLease.findUniqueOrThrow({ where: { id } });
const ops = (plugin: FakeProvider) => plugin.calls.map((c) => c.op);

describe("releaseLeaseByPolicy", () => {
  it("ephemeral + committed: destroyed through the pinned plugin", async () => {
    const { lease, runId, plugin } = await activeLease("ephemeral");
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toEqual({ kind: "destroyed", leaseId: lease.id });
    expect(ops(plugin)).toEqual(["destroy"]);
    expect(plugin.store.has(lease.providerLeaseId!)).toBe(false);
    const after = await row(lease.id);
    expect(after.status).toBe("destroyed");
    expect(after.releasedAt).not.toBeNull();
    // Repeating the call reports the same outcome and calls nothing.
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toEqual({ kind: "destroyed", leaseId: lease.id });
    expect(ops(plugin)).toEqual(["destroy"]);
  });

  it("retain_on_failure + committed: destroyed", async () => {
    const { lease, runId, plugin } = await activeLease("retain_on_failure");
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "destroyed" });
    expect(ops(plugin)).toEqual(["destroy"]);
  });

  it.each(["ephemeral", "retain_on_failure", "reuse_by_environment"] as const)(
    "R-SO-1 R-SO-3 %s + failed: the intent bound to company, run, lease, allocation and plugin is durable before the stop; stop-and-retain through builtin.stopLease; the receipt is stored and the intent cleared",
    async (policy) => {
      const { lease, runId, plugin } = await activeLease(policy);
      const requests: string[] = [];
      const stop = plugin.stopLease!.bind(plugin);
      plugin.stopLease = async (handle, request) => {
        // R-SO-1: the v2 intent with this request id is durable before the provider hears of it.
        const current = await row(handle.leaseId);
        expect(current.status).toBe("pending_cleanup");
        expect(current.metadata).toMatchObject({
          sandboxStopAndRetain: { schema: STOP_INTENT_SCHEMA, requestId: request.requestId, pluginId: "builtin.fake", runId, leaseId: lease.id, companyId: world.company.id, providerLeaseId: lease.providerLeaseId },
        });
        requests.push(request.requestId);
        return stop(handle, request);
      };
      const outcome = await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" });
      expect(outcome).toMatchObject({ kind: "stopped_and_retained", receipt: { method: "builtin.stopLease", requestId: requests[0], pluginId: "builtin.fake" } });
      expect(ops(plugin)).toEqual(["stopLease"]);
      expect(plugin.store.get(lease.providerLeaseId!)?.state).toBe("stopped");
      const after = await row(lease.id);
      expect(after.status).toBe("released");
      expect(after.metadata).not.toHaveProperty("sandboxStopAndRetain");
      expect(after.metadata).toMatchObject({
        sandboxStopAndRetainReceipt: { schema: "copyback.sandbox-stop-and-retain-receipt.v1", method: "builtin.stopLease", requestId: requests[0], providerLeaseId: lease.providerLeaseId },
      });
    },
  );

  it("R-SO-2 reuse_by_environment + committed: stopped and retained, released and resumable", async () => {
    const { lease, runId, plugin } = await activeLease("reuse_by_environment");
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "stopped_and_retained" });
    expect(ops(plugin)).toEqual(["stopLease"]);
    expect((await row(lease.id)).status).toBe("released");
  });

  it("R-SO-3 an unconfirmed receipt stays pending_cleanup (no release, no destroy); the retry reuses the intent's request id", async () => {
    const { lease, runId, plugin } = await activeLease("reuse_by_environment");
    plugin.faults.unconfirmedStop(1);
    const first = await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" });
    expect(first).toMatchObject({ kind: "pending_cleanup", code: "stop_unconfirmed" });
    const pending = await row(lease.id);
    expect(pending).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1, cleanupClaimedBy: null, cleanupClaimedUntil: null });
    expect(pending.metadata).not.toHaveProperty("sandboxStopAndRetainReceipt");
    const requestId = (pending.metadata as { sandboxStopAndRetain: { requestId: string } }).sandboxStopAndRetain.requestId;

    // Through a "restart": a new provider instance over the same sandboxes.
    const restarted = createFakeProvider({ store: plugin.store });
    const second = await releaseLeaseByPolicy(db.prisma(), registryOf(restarted), { leaseId: lease.id, runId, outcome: "committed" });
    expect(second).toMatchObject({ kind: "stopped_and_retained", receipt: { requestId } });
    expect([...ops(plugin), ...ops(restarted)]).toEqual(["stopLease", "stopLease"]);
    expect((await row(lease.id)).status).toBe("released");
  });

  it("R-EX-5 an in-flight stop holds a 15-minute cleanup claim; a second caller does not stop again; the claim is given back", async () => {
    const { lease, runId, plugin } = await activeLease("reuse_by_environment");
    const stop = plugin.stopLease!.bind(plugin);
    const seen: unknown[] = [];
    plugin.stopLease = async (handle, request) => {
      const during = await row(handle.leaseId);
      const claimedForMs = during.cleanupClaimedUntil!.getTime() - Date.now();
      seen.push({ by: during.cleanupClaimedBy, claimedRoughly15Min: claimedForMs > CLEANUP_CLAIM_MS - 120_000 && claimedForMs <= CLEANUP_CLAIM_MS + 5_000 });
      // A second release (a retry, or a sweep) while this request is in flight.
      seen.push(await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" }));
      return stop(handle, request);
    };
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "stopped_and_retained" });
    expect(seen).toEqual([{ by: `release:${runId}`, claimedRoughly15Min: true }, expect.objectContaining({ kind: "pending_cleanup", code: "cleanup_claimed" })]);
    expect(ops(plugin)).toEqual(["stopLease"]);
    expect(await row(lease.id)).toMatchObject({ status: "released", cleanupClaimedBy: null, cleanupClaimedUntil: null });
  });

  it("R-EX-5 a pending lease whose claim is held is not stopped until the claim expires", async () => {
    const { lease, runId, plugin } = await activeLease("retain_on_failure");
    plugin.faults.failTimes("stopLease", 1);
    await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" });
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: null });
    plugin.calls.length = 0;

    await db.prisma().$executeRaw`UPDATE environment_leases SET cleanup_claimed_by = 'sweep:other', cleanup_claimed_until = now() + interval '10 minutes' WHERE id = ${lease.id}::uuid`;
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).resolves.toMatchObject({ kind: "pending_cleanup", code: "cleanup_claimed" });
    expect(plugin.calls).toEqual([]);

    await db.prisma().$executeRaw`UPDATE environment_leases SET cleanup_claimed_until = now() - interval '1 second' WHERE id = ${lease.id}::uuid`;
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).resolves.toMatchObject({ kind: "stopped_and_retained" });
    expect(ops(plugin)).toEqual(["stopLease"]);
  });

  it("concurrent releases of one lease stop it once", async () => {
    const { lease, runId, plugin } = await activeLease("reuse_by_environment");
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () => releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })),
    );
    expect(outcomes.filter((o) => o.kind === "stopped_and_retained").length).toBeGreaterThanOrEqual(1);
    for (const o of outcomes) expect(["stopped_and_retained", "pending_cleanup"]).toContain(o.kind);
    for (const o of outcomes) if (o.kind === "pending_cleanup") expect(o.code).toBe("cleanup_claimed");
    expect(ops(plugin)).toEqual(["stopLease"]);
    expect((await row(lease.id)).status).toBe("released");
  });

  it("a failed stop stays pending_cleanup and counts a cleanup attempt", async () => {
    const { lease, runId, plugin } = await activeLease("retain_on_failure");
    plugin.faults.failTimes("stopLease", 1);
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).resolves.toMatchObject({ kind: "pending_cleanup", code: "stop_failed" });
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1, metadata: { failure: { code: "provider_fault_injected" } } });
    expect(ops(plugin)).toEqual(["stopLease"]);
  });

  it("R-SO-1 R-EX-6 without environmentStopLease: pending_cleanup, neither destroy nor release called", async () => {
    const plugin = createFakeProvider({ capabilities: PROVIDER_CAPABILITIES.filter((c) => c !== "environmentStopLease") });
    for (const [policy, outcome] of [["reuse_by_environment", "committed"], ["ephemeral", "failed"], ["retain_on_failure", "failed"]] as const) {
      const { lease, runId } = await activeLease(policy, plugin);
      const result = await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome });
      expect(result).toMatchObject({ kind: "pending_cleanup", code: "provider_capability_missing" });
      expect(ops(plugin)).toEqual([]);
      expect(plugin.store.get(lease.providerLeaseId!)?.state).toBe("running");
      const after = await row(lease.id);
      expect(after).toMatchObject({ status: "pending_cleanup", releasedAt: null, metadata: { sandboxStopAndRetain: { pluginId: "builtin.fake" } } });
    }
  });

  it("R-EX-6 a lease pinned to plugin A is never stopped by plugin B with the same provider name; it defers without spending an attempt", async () => {
    const pluginA = createFakeProvider({ pluginId: "vendor.fake-a" });
    const w = await buildLeaseWorld(db.prisma(), { pluginId: "vendor.fake-a" });
    const runId = await w.newRun();
    const { lease } = await acquireLease(db.prisma(), registryOf(pluginA), w.acquireInput(runId, { policy: "reuse_by_environment" }));
    pluginA.calls.length = 0;

    const pluginB = createFakeProvider({ pluginId: "vendor.fake-b", store: pluginA.store });
    const deferred = await releaseLeaseByPolicy(db.prisma(), registryOf(pluginB), { leaseId: lease.id, runId, outcome: "committed" });
    expect(deferred).toMatchObject({ kind: "pending_cleanup", code: "provider_plugin_unavailable" });
    expect(pluginB.calls).toEqual([]);
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 0 });

    // A registry whose "vendor.fake-a" serves another provider is a mismatch, not a takeover.
    const impostor = { ...createFakeProvider({ pluginId: "vendor.fake-a" }), provider: "local" as const };
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(impostor), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "pending_cleanup", code: "provider_plugin_mismatch" });

    // With A back, the same intent completes.
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(pluginA), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "stopped_and_retained", receipt: { pluginId: "vendor.fake-a" } });
    expect(ops(pluginA)).toEqual(["stopLease"]);
  });

  it("the destroy intent is recorded before the provider hears of the destroy, and cleared with it", async () => {
    const { lease, runId, plugin } = await activeLease("ephemeral");
    let seen: unknown = null;
    const spy = { ...plugin, destroy: async (handle: Parameters<NonNullable<FakeProvider["destroy"]>>[0]) => {
      seen = await row(lease.id);
      return plugin.destroy!(handle);
    } };
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(spy), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toEqual({ kind: "destroyed", leaseId: lease.id });
    expect(seen).toMatchObject({
      status: "pending_cleanup",
      cleanupClaimedBy: `release:${runId}`,
      metadata: { sandboxDestroy: { schema: DESTROY_INTENT_SCHEMA, leaseId: lease.id, runId, pluginId: "builtin.fake", providerLeaseId: lease.providerLeaseId, reason: "release" } },
    });
    const after = await row(lease.id);
    expect(after).toMatchObject({ status: "destroyed", cleanupClaimedBy: null, cleanupAttempts: 0 });
    expect(after.metadata).not.toHaveProperty("sandboxDestroy");
  });

  it("a destroy that fails twice is retried with a short backoff and destroys on the third try", async () => {
    const { lease, runId, plugin } = await activeLease("ephemeral");
    plugin.faults.failTimes("destroy", 2);
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toEqual({ kind: "destroyed", leaseId: lease.id });
    expect(ops(plugin)).toEqual(["destroy", "destroy", "destroy"]);
    expect(plugin.store.has(lease.providerLeaseId!)).toBe(false);
    expect(await row(lease.id)).toMatchObject({ status: "destroyed", cleanupAttempts: 0 });
  });

  it("a lost destroy reply is repeated (destroy is idempotent) and the lease is destroyed", async () => {
    const { lease, runId, plugin } = await activeLease("retain_on_failure");
    plugin.faults.loseReply("destroy");
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toEqual({ kind: "destroyed", leaseId: lease.id });
    expect(ops(plugin)).toEqual(["destroy", "destroy"]);
    expect((await row(lease.id)).status).toBe("destroyed");
  });

  it("a destroy still unconfirmed after three tries stays pending_cleanup with its intent (never failed); a later release finishes it", async () => {
    const { lease, runId, plugin } = await activeLease("ephemeral");
    plugin.faults.loseReply("destroy", 3);
    const outcome = await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" });
    expect(outcome).toMatchObject({ kind: "pending_cleanup", code: "destroy_failed" });
    expect(ops(plugin)).toEqual(["destroy", "destroy", "destroy"]);
    // The sandbox is in fact gone, but nobody could know: the lease keeps the intent for the sweep.
    expect(await row(lease.id)).toMatchObject({
      status: "pending_cleanup",
      releasedAt: null,
      cleanupAttempts: 1,
      cleanupClaimedBy: null,
      metadata: { sandboxDestroy: { leaseId: lease.id, providerLeaseId: lease.providerLeaseId }, failure: { code: "provider_reply_lost" } },
    });
    // The repeat continues the recorded destroy (idempotent) and settles the lease.
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toEqual({ kind: "destroyed", leaseId: lease.id });
    expect(ops(plugin)).toEqual(["destroy", "destroy", "destroy", "destroy"]);
    const after = await row(lease.id);
    expect(after).toMatchObject({ status: "destroyed", cleanupClaimedBy: null });
    expect(after.metadata).not.toHaveProperty("sandboxDestroy");
    expect(after.metadata).not.toHaveProperty("failure");
  });

  it("R-EX-6 a destroy whose plugin is unavailable defers pending_cleanup without spending an attempt; the plugin back destroys it", async () => {
    const pluginA = createFakeProvider({ pluginId: "vendor.fake-a" });
    const w = await buildLeaseWorld(db.prisma(), { pluginId: "vendor.fake-a" });
    const runId = await w.newRun();
    const { lease } = await acquireLease(db.prisma(), registryOf(pluginA), w.acquireInput(runId, { policy: "ephemeral" }));
    pluginA.calls.length = 0;
    const pluginB = createFakeProvider({ pluginId: "vendor.fake-b", store: pluginA.store });
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(pluginB), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "pending_cleanup", code: "provider_plugin_unavailable" });
    expect(pluginB.calls).toEqual([]);
    expect(pluginA.store.has(lease.providerLeaseId!)).toBe(true);
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 0, cleanupClaimedBy: null, metadata: { sandboxDestroy: { pluginId: "vendor.fake-a" } } });
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(pluginA), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toEqual({ kind: "destroyed", leaseId: lease.id });
    expect(ops(pluginA)).toEqual(["destroy"]);
  });

  it("R-EX-5 a pending destroy whose claim is held is not repeated; a malformed destroy intent grants no destroy", async () => {
    const { lease, runId, plugin } = await activeLease("ephemeral");
    plugin.faults.failTimes("destroy", 3);
    await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" });
    plugin.calls.length = 0;
    await db.prisma().environmentLease.update({ where: { id: lease.id }, data: { cleanupClaimedBy: "sweep:other", cleanupClaimedUntil: new Date(Date.now() + CLEANUP_CLAIM_MS) } });
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "pending_cleanup", code: "cleanup_claimed" });
    await db.prisma().environmentLease.update({ where: { id: lease.id }, data: { cleanupClaimedBy: null, cleanupClaimedUntil: null } });
    await db.prisma().$executeRaw`UPDATE environment_leases SET metadata = jsonb_set(metadata, '{sandboxDestroy,pluginId}', '"other.plugin"') WHERE id = ${lease.id}::uuid`;
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "pending_cleanup", code: "destroy_intent_invalid" });
    expect(plugin.calls).toEqual([]);
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1 });
  });

  it("malformed metadata grants nothing: a pending lease whose intent is malformed is not stopped", async () => {
    const { lease, runId, plugin } = await activeLease("reuse_by_environment");
    plugin.faults.unconfirmedStop(1);
    await releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" });
    plugin.calls.length = 0;
    await db.prisma().$executeRaw`UPDATE environment_leases SET metadata = jsonb_set(metadata, '{sandboxStopAndRetain,pluginId}', '"other.plugin"') WHERE id = ${lease.id}::uuid`;
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).resolves.toMatchObject({ kind: "pending_cleanup", code: "stop_intent_invalid" });
    expect(plugin.calls).toEqual([]);
    expect((await row(lease.id)).status).toBe("pending_cleanup");
  });

  it("refuses another run's lease and bad input, changing nothing", async () => {
    const { lease, runId, plugin } = await activeLease("ephemeral");
    const otherRun = await world.newRun();
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId: otherRun, outcome: "committed" })).rejects.toMatchObject({ kind: "conflict", code: "lease_run_mismatch" });
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "maybe" as never })).rejects.toMatchObject({ code: "lease_input_invalid" });
    await expect(releaseLeaseByPolicy(db.prisma(), registryOf(plugin), { leaseId: "not-a-uuid", runId, outcome: "committed" })).rejects.toMatchObject({ code: "lease_input_invalid" });
    expect(plugin.calls).toEqual([]);
    const after = await row(lease.id);
    expect(after.status).toBe("active");
    expect(after.updatedAt).toEqual(lease.updatedAt);
  });
});
