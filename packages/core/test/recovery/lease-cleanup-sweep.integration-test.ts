// The lease cleanup sweep on a real PostgreSQL with the fake provider's faults.
// Each case leaves the state a "crashed" worker leaves, through the real code (a release whose
// stop hangs, fails, loses its reply or is not confirmed; an acquisition whose reply never came),
// then runs the sweep as a fresh process would: a new provider instance over the same sandboxes
// (a restart), a new registry, a new sweep. Only the sweep's own selection decides what is due.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { Prisma } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, CLEANUP_BACKOFF_MS, CLEANUP_CLAIM_MS, CLEANUP_DEFER_MS, releaseLeaseByPolicy, STOP_INTENT_SCHEMA_V1, type LeasePolicy } from "../../src/leases/index";
import { reuseCandidatesSql } from "../../src/leases/acquire-lease";
import { createFakeProvider, type FakeProvider, type FakeSandboxStore } from "../../src/providers/fake/index";
import { PROVIDER_CAPABILITIES, type EnvironmentProvider } from "../../src/providers/types";
import { Reconciler } from "../../src/recovery/reconciler";
import { dueLeaseCleanupsSql, leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { buildLeaseWorld, registryOf } from "../leases/lease-fixture";

const db = useTestDatabase({ poolSize: 8 });
type World = Awaited<ReturnType<typeof buildLeaseWorld>>;
const prisma = () => db.prisma();
const row = (id: string) => prisma().environmentLease.findUniqueOrThrow({ where: { id } });
const ops = (plugin: FakeProvider) => plugin.calls.map((c) => c.op);
const noSleep = async () => undefined;

/** Releases that never settle (a hung provider call): "crashed" workers whose requests were in flight. */
const abandoned: Promise<unknown>[] = [];
afterAll(() => {
  abandoned.length = 0;
});

/** An active lease of `policy` on its own workspace, acquired through the real path. */
async function activeLease(w: World, policy: LeasePolicy, plugin: FakeProvider) {
  const workspace = await w.anotherWorkspace(`ws${Math.random().toString(36).slice(2, 8)}`);
  const runId = await w.newRun();
  const acquired = await acquireLease(prisma(), registryOf(plugin), w.acquireInput(runId, { policy, executionWorkspaceId: workspace.id }));
  plugin.calls.length = 0;
  return { lease: acquired.lease, runId, workspaceId: workspace.id };
}

/** A fresh process: a new provider instance over the same sandboxes, and a new sweep. */
function restart(store: FakeSandboxStore, options: Parameters<typeof createFakeProvider>[0] = {}) {
  const plugin = createFakeProvider({ store, ...options });
  return { plugin, sweep: leaseCleanupSweep({ db: prisma(), registry: registryOf(plugin), sleep: noSleep }) };
}

/** Runs the sweep's own selection, then handles the selected units among `leaseIds` (other tests' leases are left alone). */
async function sweepOnce(sweep: ReturnType<typeof leaseCleanupSweep>, leaseIds: string[]): Promise<Record<string, string>> {
  const due = (await sweep.due(1000)).filter((unit) => leaseIds.includes(unit.leaseId));
  const outcomes: Record<string, string> = {};
  for (const unit of due) outcomes[unit.leaseId] = await sweep.handle(unit);
  return outcomes;
}

/** Time passes: the lease's next cleanup is due now. */
const makeDue = (leaseId: string) => prisma().$executeRaw`UPDATE environment_leases SET next_cleanup_at = now() - interval '1 second' WHERE id = ${leaseId}::uuid`;

/** Milliseconds from now until the lease's next cleanup. */
async function dueInMs(leaseId: string): Promise<number> {
  const lease = await row(leaseId);
  return (lease.nextCleanupAt?.getTime() ?? Number.NaN) - Date.now();
}

const roughly = (actual: number, expected: number) => {
  expect(actual).toBeGreaterThan(expected - 10_000);
  expect(actual).toBeLessThanOrEqual(expected + 1_000);
};

async function waitFor<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  for (let i = 0; i < 200; i += 1) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error("condition not reached");
}

/** A worker that crashed while its stop request was in flight: the intent and the 15-minute claim are written, the provider never answered. */
async function crashDuringStop(w: World, policy: LeasePolicy, outcome: "committed" | "failed") {
  const plugin = createFakeProvider();
  const { lease, runId, workspaceId } = await activeLease(w, policy, plugin);
  plugin.faults.hang("stopLease");
  abandoned.push(releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome }));
  const left = await waitFor(() => row(lease.id), (l) => l.status === "pending_cleanup" && l.cleanupClaimedBy !== null && ops(plugin).includes("stopLease"));
  return { lease, runId, workspaceId, store: plugin.store, left };
}

describe("the lease cleanup sweep: stop-only intents", () => {
  it("R-SO-1 R-EX-5 a successful reusable run's stop_and_retain, in flight when its worker crashed: nothing is taken over while the 15-minute claim holds; then the verified stop releases it, resumable", async () => {
    const w = await buildLeaseWorld(prisma());
    const { lease, runId, workspaceId, store, left } = await crashDuringStop(w, "reuse_by_environment", "committed");
    await prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "succeeded" } });
    expect(left).toMatchObject({ cleanupClaimedBy: `release:${runId}`, metadata: { sandboxStopAndRetain: { runId, leaseId: lease.id, pluginId: "builtin.fake" } } });
    const claimedForMs = left.cleanupClaimedUntil!.getTime() - Date.now();
    roughly(claimedForMs, CLEANUP_CLAIM_MS);
    const requestId = (left.metadata as { sandboxStopAndRetain: { requestId: string } }).sandboxStopAndRetain.requestId;

    const first = restart(store);
    expect(await sweepOnce(first.sweep, [lease.id])).toEqual({});
    // Even handed the unit directly, a live claim is not taken over and nothing is written.
    expect(await first.sweep.handle({ leaseId: lease.id, companyId: w.company.id })).toBe("claimed");
    expect(first.plugin.calls).toEqual([]);
    expect((await row(lease.id)).updatedAt).toEqual(left.updatedAt);

    // Fifteen minutes later the claim has expired.
    await prisma().$executeRaw`UPDATE environment_leases SET cleanup_claimed_until = now() - interval '1 second' WHERE id = ${lease.id}::uuid`;
    const second = restart(store);
    expect(await sweepOnce(second.sweep, [lease.id])).toEqual({ [lease.id]: "stopped_and_retained" });
    expect(second.plugin.calls).toEqual([{ op: "stopLease", leaseId: lease.id }]);
    expect(store.get(lease.providerLeaseId!)!.state).toBe("stopped");
    const released = await row(lease.id);
    expect(released).toMatchObject({ status: "released", cleanupClaimedBy: null, metadata: { sandboxStopAndRetainReceipt: { requestId, method: "builtin.stopLease" } } });
    expect(released.metadata).not.toHaveProperty("sandboxStopAndRetain");
    // R-SO-2: released and resumable: the next run of the environment reuses it.
    const next = await acquireLease(prisma(), registryOf(second.plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment", executionWorkspaceId: workspaceId }));
    expect(next).toMatchObject({ reused: true, lease: { id: lease.id } });
  });

  it("R-SO-1 R-RR-3 a startup cancellation's stop that failed is retried with the cleanup backoff through restarts; the retained sandbox stays held", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const { lease, runId, workspaceId } = await activeLease(w, "reuse_by_environment", plugin);
    // The run was cancelled before its agent started; the executor releases its lease as failed.
    await prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "cancelled" } });
    plugin.faults.failTimes("stopLease", 1);
    expect(await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).toMatchObject({ kind: "pending_cleanup", code: "stop_failed" });
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1, cleanupClaimedBy: null });
    roughly(await dueInMs(lease.id), CLEANUP_BACKOFF_MS[0]);

    // Not due yet: a restarted sweep leaves it alone.
    const early = restart(plugin.store);
    expect(await sweepOnce(early.sweep, [lease.id])).toEqual({});
    expect(early.plugin.calls).toEqual([]);

    // Due, and the provider fails again: a second attempt, the next delay.
    await makeDue(lease.id);
    const failing = restart(plugin.store);
    failing.plugin.faults.failTimes("stopLease", 1);
    expect(await sweepOnce(failing.sweep, [lease.id])).toEqual({ [lease.id]: "stop_failed" });
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 2, metadata: { failure: { code: "provider_fault_injected" } } });
    roughly(await dueInMs(lease.id), CLEANUP_BACKOFF_MS[1]);

    await makeDue(lease.id);
    const ok = restart(plugin.store);
    expect(await sweepOnce(ok.sweep, [lease.id])).toEqual({ [lease.id]: "stopped_and_retained" });
    expect(ops(ok.plugin)).toEqual(["stopLease"]);
    // Released with its receipt, but its run was cancelled without a commit: held, never reused.
    const next = await acquireLease(prisma(), registryOf(ok.plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment", executionWorkspaceId: workspaceId }));
    expect(next.reused).toBe(false);
    expect(ok.plugin.calls.filter((c) => c.leaseId === lease.id).map((c) => c.op)).toEqual(["stopLease"]);
  });

  it("R-EX-5 a lost stop reply: the sweep repeats the same request and the matching receipt releases", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const { lease, runId } = await activeLease(w, "ephemeral", plugin);
    plugin.faults.loseReply("stopLease");
    expect(await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).toMatchObject({ kind: "pending_cleanup", code: "stop_failed" });
    const requestId = ((await row(lease.id)).metadata as { sandboxStopAndRetain: { requestId: string } }).sandboxStopAndRetain.requestId;
    await makeDue(lease.id);
    const fresh = restart(plugin.store);
    expect(await sweepOnce(fresh.sweep, [lease.id])).toEqual({ [lease.id]: "stopped_and_retained" });
    // R-EX-4: an ephemeral allocation of a failed run is stopped and retained, never destroyed.
    expect(ops(fresh.plugin)).toEqual(["stopLease"]);
    expect(fresh.plugin.store.has(lease.providerLeaseId!)).toBe(true);
    expect(await row(lease.id)).toMatchObject({ status: "released", metadata: { sandboxStopAndRetainReceipt: { requestId } } });
  });

  it("R-EX-5 R-SO-3 an unconfirmed stop, a stale receipt or a receipt by a method the plugin may not use never releases", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const { lease, runId } = await activeLease(w, "reuse_by_environment", plugin);
    plugin.faults.unconfirmedStop(1);
    await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" });

    await makeDue(lease.id);
    const unconfirmed = restart(plugin.store);
    unconfirmed.plugin.faults.unconfirmedStop();
    expect(await sweepOnce(unconfirmed.sweep, [lease.id])).toEqual({ [lease.id]: "stop_unconfirmed" });

    // A receipt that answers another (older) request: stale.
    await makeDue(lease.id);
    const stale = restart(plugin.store);
    const stop = stale.plugin.stopLease!.bind(stale.plugin);
    stale.plugin.stopLease = async (handle, request) => ({ ...(await stop(handle, request)), requestId: randomUUID() });
    expect(await sweepOnce(stale.sweep, [lease.id])).toEqual({ [lease.id]: "stop_receipt_mismatch" });

    // The built-in fake's receipts must say builtin.stopLease; one that claims the hook is refused.
    await makeDue(lease.id);
    const lying = restart(plugin.store, { stopMethod: "environmentStopLease" });
    expect(await sweepOnce(lying.sweep, [lease.id])).toEqual({ [lease.id]: "stop_receipt_mismatch" });

    const pending = await row(lease.id);
    expect(pending).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 4, releasedAt: null });
    expect(pending.metadata).not.toHaveProperty("sandboxStopAndRetainReceipt");
    // Each counted attempt waited longer (the fourth failure: the fourth delay).
    roughly(await dueInMs(lease.id), CLEANUP_BACKOFF_MS[3]);

    await makeDue(lease.id);
    const honest = restart(plugin.store);
    expect(await sweepOnce(honest.sweep, [lease.id])).toEqual({ [lease.id]: "stopped_and_retained" });
  });

  it("R-EX-5 a changed lease, a competing owner of the allocation or another owner's live claim prevents the takeover: no provider call, no attempt spent", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const changed = await activeLease(w, "reuse_by_environment", plugin);
    const competed = await activeLease(w, "reuse_by_environment", plugin);
    const claimed = await activeLease(w, "reuse_by_environment", plugin);
    plugin.faults.unconfirmedStop(3);
    for (const l of [changed, competed, claimed]) await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: l.lease.id, runId: l.runId, outcome: "committed" });

    // The lease row changed since its intent was written: it names another allocation now.
    await prisma().environmentLease.update({ where: { id: changed.lease.id }, data: { providerLeaseId: `fake-${randomUUID()}` } });
    // Another unsettled lease claims the same allocation.
    await prisma().environmentLease.create({
      data: {
        companyId: w.company.id, environmentId: w.environment.id, executionWorkspaceId: competed.workspaceId, runId: await w.newRun(), provider: "fake",
        pluginId: "builtin.fake", providerLeaseId: competed.lease.providerLeaseId, leasePolicy: "reuse_by_environment", status: "active",
      },
    });
    // Another owner holds the cleanup claim (its stop is in flight).
    await prisma().$executeRaw`UPDATE environment_leases SET cleanup_claimed_by = 'sweep:elsewhere:1', cleanup_claimed_until = now() + interval '10 minutes' WHERE id = ${claimed.lease.id}::uuid`;
    const ids = [changed.lease.id, competed.lease.id, claimed.lease.id];
    for (const id of ids) await makeDue(id);

    const fresh = restart(plugin.store);
    expect(await sweepOnce(fresh.sweep, ids)).toEqual({ [changed.lease.id]: "stop_intent_invalid", [competed.lease.id]: "competing_owner" });
    expect(await fresh.sweep.handle({ leaseId: claimed.lease.id, companyId: w.company.id })).toBe("claimed");
    expect(fresh.plugin.calls).toEqual([]);
    for (const id of ids) expect(await row(id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1 });
    expect(await row(changed.lease.id)).toMatchObject({ cleanupClaimedBy: null, metadata: { failure: { code: "stop_intent_invalid" } } });
    expect(await row(competed.lease.id)).toMatchObject({ cleanupClaimedBy: null, metadata: { failure: { code: "cleanup_competing_owner" } } });
    expect(await row(claimed.lease.id)).toMatchObject({ cleanupClaimedBy: "sweep:elsewhere:1" });
    // Deferred, not retried every pass.
    roughly(await dueInMs(changed.lease.id), CLEANUP_DEFER_MS);
    roughly(await dueInMs(competed.lease.id), CLEANUP_DEFER_MS);
    expect(await sweepOnce(fresh.sweep, ids)).toEqual({});
  });
});

describe("the lease cleanup sweep: the recorded plugin (R-EX-6, R-EX-7)", () => {
  it("R-EX-6 only the lease's recorded plugin cleans up: another plugin with the same provider name cannot take over, an unavailable plugin defers without spending an attempt", async () => {
    const w = await buildLeaseWorld(prisma(), { pluginId: "vendor.fake-a" });
    const pluginA = createFakeProvider({ pluginId: "vendor.fake-a" });
    const { lease, runId } = await activeLease(w, "reuse_by_environment", pluginA);
    pluginA.faults.unconfirmedStop(1);
    await releaseLeaseByPolicy(prisma(), registryOf(pluginA), { leaseId: lease.id, runId, outcome: "committed" });
    await makeDue(lease.id);

    const pluginB = createFakeProvider({ pluginId: "vendor.fake-b", store: pluginA.store });
    const withB = leaseCleanupSweep({ db: prisma(), registry: registryOf(pluginB) });
    expect(await sweepOnce(withB, [lease.id])).toEqual({ [lease.id]: "provider_plugin_unavailable" });
    expect(pluginB.calls).toEqual([]);
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1, cleanupClaimedBy: null, metadata: { failure: { code: "provider_plugin_unavailable" } } });
    roughly(await dueInMs(lease.id), CLEANUP_DEFER_MS);

    // A registry whose "vendor.fake-a" serves another provider is a mismatch, not a takeover.
    await makeDue(lease.id);
    const impostor: EnvironmentProvider = { ...createFakeProvider({ pluginId: "vendor.fake-a", store: pluginA.store }), provider: "local" };
    expect(await sweepOnce(leaseCleanupSweep({ db: prisma(), registry: registryOf(impostor) }), [lease.id])).toEqual({ [lease.id]: "provider_plugin_mismatch" });
    expect(await row(lease.id)).toMatchObject({ cleanupAttempts: 1 });

    // Plugin A back (a restart of it): the same intent completes, its receipt by environmentStopLease.
    await makeDue(lease.id);
    const backA = createFakeProvider({ pluginId: "vendor.fake-a", store: pluginA.store });
    expect(await sweepOnce(leaseCleanupSweep({ db: prisma(), registry: registryOf(backA) }), [lease.id])).toEqual({ [lease.id]: "stopped_and_retained" });
    expect(await row(lease.id)).toMatchObject({ status: "released", metadata: { sandboxStopAndRetainReceipt: { pluginId: "vendor.fake-a", method: "environmentStopLease" } } });
  });

  it("R-SO-1 R-EX-6 R-SO-3 a plugin without environmentStopLease gets neither release nor destroy, through restarts", async () => {
    const w = await buildLeaseWorld(prisma());
    const old = () => createFakeProvider({ capabilities: PROVIDER_CAPABILITIES.filter((c) => c !== "environmentStopLease") });
    const plugin = old();
    const leases = [];
    for (const [policy, outcome] of [["reuse_by_environment", "committed"], ["ephemeral", "failed"], ["retain_on_failure", "failed"]] as const) {
      const l = await activeLease(w, policy, plugin);
      expect(await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: l.lease.id, runId: l.runId, outcome })).toMatchObject({ code: "provider_capability_missing" });
      leases.push(l.lease);
    }
    const ids = leases.map((l) => l.id);
    for (const id of ids) await makeDue(id);
    const restarted = old();
    const outcomes = await sweepOnce(leaseCleanupSweep({ db: prisma(), registry: registryOf(Object.assign(restarted, { store: plugin.store })) }), ids);
    expect(Object.values(outcomes)).toEqual(["provider_capability_missing", "provider_capability_missing", "provider_capability_missing"]);
    expect(restarted.calls).toEqual([]);
    for (const l of leases) {
      expect(await row(l.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 0, releasedAt: null });
      expect(plugin.store.get(l.providerLeaseId!)?.state).toBe("running");
    }
  });

  it("R-EX-7 a v1 intent (no plugin pin) is recovered with the lease's recorded plugin; an explicit mismatched pin is rejected", async () => {
    const w = await buildLeaseWorld(prisma(), { pluginId: "vendor.fake-a" });
    const plugin = createFakeProvider({ pluginId: "vendor.fake-a" });
    const v1 = await activeLease(w, "retain_on_failure", plugin);
    const pinned = await activeLease(w, "retain_on_failure", plugin);
    plugin.faults.unconfirmedStop(2);
    for (const l of [v1, pinned]) await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: l.lease.id, runId: l.runId, outcome: "failed" });
    // As an older controller wrote it: schema v1, no pluginId.
    await prisma().$executeRaw`
      UPDATE environment_leases SET metadata = jsonb_set(metadata, '{sandboxStopAndRetain}', (metadata -> 'sandboxStopAndRetain') - 'pluginId' || jsonb_build_object('schema', ${STOP_INTENT_SCHEMA_V1}::text))
      WHERE id = ${v1.lease.id}::uuid`;
    await prisma().$executeRaw`UPDATE environment_leases SET metadata = jsonb_set(metadata, '{sandboxStopAndRetain,pluginId}', '"vendor.fake-b"') WHERE id = ${pinned.lease.id}::uuid`;
    const ids = [v1.lease.id, pinned.lease.id];
    for (const id of ids) await makeDue(id);

    const restarted = createFakeProvider({ pluginId: "vendor.fake-a", store: plugin.store });
    const pluginB = createFakeProvider({ pluginId: "vendor.fake-b", store: plugin.store });
    const outcomes = await sweepOnce(leaseCleanupSweep({ db: prisma(), registry: registryOf(restarted, pluginB) }), ids);
    expect(outcomes).toEqual({ [v1.lease.id]: "stopped_and_retained", [pinned.lease.id]: "stop_intent_invalid" });
    expect(restarted.calls).toEqual([{ op: "stopLease", leaseId: v1.lease.id }]);
    expect(pluginB.calls).toEqual([]);
    expect(await row(v1.lease.id)).toMatchObject({ status: "released", metadata: { sandboxStopAndRetainReceipt: { pluginId: "vendor.fake-a" } } });
    expect(await row(pinned.lease.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1, metadata: { failure: { code: "stop_intent_invalid" } } });
  });
});

describe("the lease cleanup sweep: leftovers of the dispatch path", () => {
  it("a destroy after a commit left unconfirmed: the sweep destroys the allocation", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const { lease, runId } = await activeLease(w, "ephemeral", plugin);
    plugin.faults.loseReply("destroy", 3).failTimes("destroy", 3);
    expect(await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "committed" })).toMatchObject({ code: "destroy_failed" });
    roughly(await dueInMs(lease.id), CLEANUP_BACKOFF_MS[0]);
    await makeDue(lease.id);
    const fresh = restart(plugin.store);
    expect(await sweepOnce(fresh.sweep, [lease.id])).toEqual({ [lease.id]: "destroyed" });
    expect(ops(fresh.plugin)).toEqual(["destroy"]);
    expect(await row(lease.id)).toMatchObject({ status: "destroyed", cleanupClaimedBy: null });
  });

  it("an acquisition whose replies were lost: the sweep names the allocation by acquiring again with the lease id, then destroys it", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    plugin.faults.loseReply("acquire", 2);
    const runId = await w.newRun();
    await expect(acquireLease(prisma(), registryOf(plugin), w.acquireInput(runId))).rejects.toMatchObject({ code: "provider_reply_lost" });
    const [lease] = await prisma().environmentLease.findMany({ where: { environmentId: w.environment.id } });
    expect(lease).toMatchObject({ status: "pending_cleanup", providerLeaseId: null, metadata: { sandboxDestroy: { reason: "acquire_unconfirmed", providerLeaseId: null } } });
    expect(plugin.store.size).toBe(1);

    // A failed acquire in the sweep counts an attempt; the intent stays.
    const failing = restart(plugin.store);
    failing.plugin.faults.failTimes("acquire", 1);
    expect(await sweepOnce(failing.sweep, [lease!.id])).toEqual({ [lease!.id]: "destroy_failed" });
    expect(await row(lease!.id)).toMatchObject({ status: "pending_cleanup", cleanupAttempts: 1, providerLeaseId: null });

    await makeDue(lease!.id);
    const fresh = restart(plugin.store);
    expect(await sweepOnce(fresh.sweep, [lease!.id])).toEqual({ [lease!.id]: "destroyed" });
    expect(fresh.plugin.calls.map((c) => [c.op, c.leaseId])).toEqual([["acquire", lease!.id], ["destroy", lease!.id]]);
    expect(plugin.store.size).toBe(0);
    expect(await row(lease!.id)).toMatchObject({ status: "destroyed", providerLeaseId: `fake-${lease!.id}` });
  });

  it("an active lease that never recorded its allocation, released after its run ended: a destroy intent by lease id, settled by the sweep", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const runId = await w.newRun();
    // The worker crashed between writing the lease row and recording the provider's answer.
    const lease = await prisma().environmentLease.create({
      data: { companyId: w.company.id, environmentId: w.environment.id, executionWorkspaceId: w.workspace.id, runId, provider: "fake", pluginId: "builtin.fake", leasePolicy: "reuse_by_environment", status: "active" },
    });
    expect(await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" })).toMatchObject({ kind: "pending_cleanup", code: "lease_not_allocated" });
    expect(plugin.calls).toEqual([]);
    expect(await row(lease.id)).toMatchObject({ status: "pending_cleanup", metadata: { sandboxDestroy: { reason: "acquire_unconfirmed", providerLeaseId: null, leaseId: lease.id } } });
    const fresh = restart(plugin.store);
    expect(await sweepOnce(fresh.sweep, [lease.id])).toEqual({ [lease.id]: "destroyed" });
    expect(ops(fresh.plugin)).toEqual(["acquire", "destroy"]);
  });
});

describe("the lease cleanup sweep: what it never touches, and its selection", () => {
  it("R-DT-3 no lease-age sweep deletes a released, confirmed-stopped allocation, however old", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const { lease, runId } = await activeLease(w, "ephemeral", plugin);
    await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" });
    await prisma().$executeRaw`UPDATE environment_leases SET acquired_at = now() - interval '3 years', released_at = now() - interval '3 years', updated_at = now() - interval '3 years' WHERE id = ${lease.id}::uuid`;
    const before = await row(lease.id);
    expect(before.status).toBe("released");
    const fresh = restart(plugin.store);
    expect((await fresh.sweep.due(1000)).map((u) => u.leaseId)).not.toContain(lease.id);
    // A whole reconciler pass of the sweep, over every lease of the database.
    await new Reconciler({ sweeps: [fresh.sweep] }).pass();
    expect(fresh.plugin.calls.filter((c) => c.leaseId === lease.id)).toEqual([]);
    expect(await row(lease.id)).toEqual(before);
    expect(plugin.store.get(lease.providerLeaseId!)?.state).toBe("stopped");
  });

  it("R-RR-6 R-RR-3 a retain_on_failure source is stopped and verified, never destroyed, and never selected for reuse", async () => {
    const w = await buildLeaseWorld(prisma());
    const plugin = createFakeProvider();
    const { lease, runId, workspaceId } = await activeLease(w, "retain_on_failure", plugin);
    plugin.faults.failTimes("stopLease", 1);
    await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: lease.id, runId, outcome: "failed" });
    await makeDue(lease.id);
    const fresh = restart(plugin.store);
    expect(await sweepOnce(fresh.sweep, [lease.id])).toEqual({ [lease.id]: "stopped_and_retained" });
    expect(ops(fresh.plugin)).toEqual(["stopLease"]);
    expect(await row(lease.id)).toMatchObject({ status: "released", leasePolicy: "retain_on_failure" });
    // Even if its run had been settled otherwise, the ordinary reuse never selects it.
    await prisma().heartbeatRun.update({ where: { id: runId }, data: { status: "succeeded" } });
    const candidates = await prisma().$queryRaw<{ id: string }[]>(reuseCandidatesSql({ companyId: w.company.id, environmentId: w.environment.id, executionWorkspaceId: workspaceId }));
    expect(candidates).toEqual([]);
    const next = await acquireLease(prisma(), registryOf(fresh.plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment", executionWorkspaceId: workspaceId }));
    expect(next.reused).toBe(false);
    expect(fresh.plugin.store.get(lease.providerLeaseId!)?.state).toBe("stopped");
  });

  it("selects due pending_cleanup leases only, bounded, the longest-waiting of each company first, through its partial index", async () => {
    // Everything other tests left pending is put off, so only this test's leases are due.
    await prisma().$executeRaw`UPDATE environment_leases SET next_cleanup_at = now() + interval '1 day' WHERE status = 'pending_cleanup'`;
    const noisy = await buildLeaseWorld(prisma());
    const quiet = [await buildLeaseWorld(prisma()), await buildLeaseWorld(prisma())];
    const plugin = createFakeProvider();
    plugin.faults.unconfirmedStop();
    const pendingOf = async (w: World) => {
      const l = await activeLease(w, "reuse_by_environment", plugin);
      await releaseLeaseByPolicy(prisma(), registryOf(plugin), { leaseId: l.lease.id, runId: l.runId, outcome: "committed" });
      return l.lease.id;
    };
    const noisyIds = [];
    for (let i = 0; i < 6; i += 1) noisyIds.push(await pendingOf(noisy));
    const quietIds = [await pendingOf(quiet[0]!), await pendingOf(quiet[1]!)];
    // The noisy company's leases have waited longest.
    await prisma().$executeRaw`UPDATE environment_leases SET next_cleanup_at = now() - interval '1 hour' WHERE id = ANY(${noisyIds}::uuid[])`;
    for (const id of quietIds) await makeDue(id);
    // One lease not due yet, one whose claim is live: neither is selected.
    const notDue = await pendingOf(noisy);
    const inFlight = await pendingOf(noisy);
    await makeDue(inFlight);
    await prisma().$executeRaw`UPDATE environment_leases SET cleanup_claimed_by = 'release:x', cleanup_claimed_until = now() + interval '15 minutes' WHERE id = ${inFlight}::uuid`;

    const sweep = leaseCleanupSweep({ db: prisma(), registry: registryOf(plugin) });
    const first = await sweep.due(3);
    expect(first).toHaveLength(3);
    expect(new Set(first.map((u) => u.companyId))).toEqual(new Set([noisy.company.id, quiet[0]!.company.id, quiet[1]!.company.id]));
    const all = (await sweep.due(100)).map((u) => u.leaseId);
    expect(all.sort()).toEqual([...noisyIds, ...quietIds].sort());
    expect(all).not.toContain(notDue);
    expect(all).not.toContain(inFlight);

    // Fresh statistics first: otherwise the plan depends on when autovacuum last analyzed the
    // table (with stale ones the planner sometimes preferred the (status, next_cleanup_at) index).
    await prisma().$executeRaw`ANALYZE environment_leases`;
    const plan = await prisma().$transaction(async (tx) => {
      await tx.$executeRaw`SET LOCAL enable_seqscan = off`;
      return tx.$queryRaw<{ "QUERY PLAN": string }[]>(Prisma.sql`EXPLAIN ${dueLeaseCleanupsSql(50)}`);
    });
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("environment_leases_cleanup_due");
  });
});
