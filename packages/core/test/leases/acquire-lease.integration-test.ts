// acquireLease against a real PostgreSQL with the built-in fake provider: the row is written
// before the provider is asked, R-DT-2 sentinels, one active ephemeral lease per environment
// and workspace (the partial unique index), reuse only with a confirmed stop receipt through
// the pinned plugin (R-EX-6), and bad input or malformed metadata that grants nothing.
import { describe, expect, it } from "vitest";
import { Prisma } from "@copyback/db";
import { useTestDatabase } from "@copyback/db/testing";
import { DomainError } from "../../src/errors";
import { acquireLease, DESTROY_INTENT_SCHEMA, readDestroyIntent, readWorkspaceSentinel, releaseLeaseByPolicy, transitionLease, verifyWorkspaceSentinel } from "../../src/leases/index";
import { reuseCandidatesSql } from "../../src/leases/acquire-lease";
import { createFakeProvider } from "../../src/providers/fake/index";
import { buildLeaseWorld, registryOf } from "./lease-fixture";

const db = useTestDatabase({ poolSize: 8 });
type World = Awaited<ReturnType<typeof buildLeaseWorld>>;

const rejection = async (promise: Promise<unknown>): Promise<DomainError> => {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
};

/** A released reuse_by_environment lease with a confirmed stop receipt, made through the real paths. */
async function releasedReusableLease(w: World, plugin = createFakeProvider(), workspaceId?: string) {
  const registry = registryOf(plugin);
  const runId = await w.newRun();
  const acquired = await acquireLease(db.prisma(), registry, w.acquireInput(runId, { policy: "reuse_by_environment", ...(workspaceId ? { executionWorkspaceId: workspaceId } : {}) }));
  const released = await releaseLeaseByPolicy(db.prisma(), registry, { leaseId: acquired.lease.id, runId, outcome: "committed" });
  expect(released.kind).toBe("stopped_and_retained");
  return { acquired, runId, plugin, registry };
}

describe("acquireLease: new allocations", () => {
  it("R-EX-6 writes the lease row (active, provider and plugin from the environment) before the provider allocates", async () => {
    const prisma = db.prisma();
    const seen: unknown[] = [];
    const plugin = createFakeProvider();
    const acquire = plugin.acquire!.bind(plugin);
    plugin.acquire = async (request) => {
      seen.push(await prisma.environmentLease.findUnique({ where: { id: request.leaseId }, select: { status: true, pluginId: true, provider: true, providerLeaseId: true } }));
      expect(request.config).toEqual({ note: "fixture" });
      return acquire(request);
    };
    const w = await buildLeaseWorld(prisma);
    const runId = await w.newRun();
    const result = await acquireLease(prisma, registryOf(plugin), w.acquireInput(runId));

    expect(seen).toEqual([{ status: "active", pluginId: "builtin.fake", provider: "fake", providerLeaseId: null }]);
    expect(result.reused).toBe(false);
    expect(result.isolated).toBe(false);
    expect(result.lease).toMatchObject({ status: "active", leasePolicy: "ephemeral", runId, issueId: w.issue.id, pluginId: "builtin.fake" });
    expect(result.lease.providerLeaseId).toBe(`fake-${result.lease.id}`);
    expect(result.handle).toEqual({ leaseId: result.lease.id, pluginId: "builtin.fake", providerLeaseId: `fake-${result.lease.id}` });
  });

  it("R-DT-2 writes an acquisition-time sentinel for a new ephemeral allocation, bound to the run and allocation", async () => {
    const plugin = createFakeProvider();
    const w = await buildLeaseWorld(db.prisma());
    const runId = await w.newRun();
    const { lease } = await acquireLease(db.prisma(), registryOf(plugin), w.acquireInput(runId));
    const fingerprint = plugin.store.get(lease.providerLeaseId!)!.identity.fingerprint;

    const verdict = verifyWorkspaceSentinel(lease.metadata, { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId, runId, fingerprint });
    expect(verdict.kind).toBe("valid");
    // Bound: another run or another allocation does not match it.
    expect(verifyWorkspaceSentinel(lease.metadata, { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId, runId: await w.newRun(), fingerprint }).kind).toBe("mismatch");
    expect(verifyWorkspaceSentinel(lease.metadata, { leaseId: lease.id, pluginId: lease.pluginId, providerLeaseId: lease.providerLeaseId, runId, fingerprint: "fake:other" }).kind).toBe("mismatch");
    expect(lease.metadata).toMatchObject({ identity: { providerLeaseId: lease.providerLeaseId, fingerprint }, isolated: false });
  });

  it("R-DT-2 gives no sentinel to allocations of the other policies, nor to a reused lease", async () => {
    const w = await buildLeaseWorld(db.prisma());
    const plugin = createFakeProvider();
    const retained = await acquireLease(db.prisma(), registryOf(plugin), w.acquireInput(await w.newRun(), { policy: "retain_on_failure" }));
    expect(readWorkspaceSentinel(retained.lease.metadata).kind).toBe("absent");

    const { acquired } = await releasedReusableLease(w, plugin);
    expect(readWorkspaceSentinel(acquired.lease.metadata).kind).toBe("absent");
    const reused = await acquireLease(db.prisma(), registryOf(plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
    expect(reused.reused).toBe(true);
    expect(readWorkspaceSentinel(reused.lease.metadata).kind).toBe("absent");
  });

  it("uses the environment's default lease policy when none is given", async () => {
    const w = await buildLeaseWorld(db.prisma(), { defaultLeasePolicy: "retain_on_failure" });
    const { lease } = await acquireLease(db.prisma(), registryOf(createFakeProvider()), w.acquireInput(await w.newRun()));
    expect(lease.leasePolicy).toBe("retain_on_failure");
  });

  it("one active ephemeral lease per environment and execution workspace: a second acquisition is lease_busy and allocates nothing", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const registry = registryOf(plugin);
    const first = await acquireLease(prisma, registry, w.acquireInput(await w.newRun()));

    const error = await rejection(acquireLease(prisma, registry, w.acquireInput(await w.newRun())));
    expect(error).toMatchObject({ kind: "conflict", code: "lease_busy" });
    expect(plugin.calls.filter((c) => c.op === "acquire")).toHaveLength(1);
    expect(await prisma.environmentLease.count({ where: { environmentId: w.environment.id } })).toBe(1);

    // Another workspace of the same environment, and other policies, are not blocked.
    const other = await w.anotherWorkspace("second");
    await acquireLease(prisma, registry, w.acquireInput(await w.newRun(), { executionWorkspaceId: other.id }));
    await acquireLease(prisma, registry, w.acquireInput(await w.newRun(), { policy: "retain_on_failure" }));

    // Once the first is destroyed, the pair is free again.
    await releaseLeaseByPolicy(prisma, registry, { leaseId: first.lease.id, runId: first.lease.runId!, outcome: "committed" });
    const again = await acquireLease(prisma, registry, w.acquireInput(await w.newRun()));
    expect(again.lease.status).toBe("active");
  });

  it("one active ephemeral lease per environment and execution workspace under concurrent acquisitions", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const runs = await Promise.all(Array.from({ length: 6 }, () => w.newRun()));
    const results = await Promise.allSettled(runs.map((runId) => acquireLease(prisma, registryOf(plugin), w.acquireInput(runId))));
    const won = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(won).toHaveLength(1);
    expect(lost.map((r) => (r.reason as DomainError).code)).toEqual(Array(5).fill("lease_busy"));
    expect(await prisma.environmentLease.count({ where: { environmentId: w.environment.id, status: "active" } })).toBe(1);
    expect(plugin.calls.filter((c) => c.op === "acquire")).toHaveLength(1);
  });

  it("a provider failure is retried once with the same lease id; the retry allocates the sandbox", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    plugin.faults.failTimes("acquire", 1);
    const acquired = await acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun()));
    expect(plugin.calls.filter((c) => c.op === "acquire")).toEqual([
      { op: "acquire", leaseId: acquired.lease.id },
      { op: "acquire", leaseId: acquired.lease.id },
    ]);
    expect(acquired.lease).toMatchObject({ status: "active", providerLeaseId: `fake-${acquired.lease.id}` });
    expect(acquired.lease.metadata).not.toHaveProperty("sandboxDestroy");
  });

  it("a lost acquire reply: the repeat with the same lease id adopts the sandbox the first call made", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    plugin.faults.loseReply("acquire");
    const acquired = await acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun()));
    expect(plugin.calls.filter((c) => c.op === "acquire")).toHaveLength(2);
    // One sandbox, recorded on the lease: nothing leaked.
    expect([...plugin.store.keys()]).toEqual([acquired.lease.providerLeaseId]);
    expect(acquired.lease.metadata).toMatchObject({ identity: plugin.store.get(acquired.lease.providerLeaseId!)!.identity });
  });

  it("acquire replies lost twice: pending_cleanup with a destroy intent naming the lease id (not failed); the sandbox stays findable", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    plugin.faults.loseReply("acquire", 2);
    const runId = await w.newRun();
    const error = await rejection(acquireLease(prisma, registryOf(plugin), w.acquireInput(runId)));
    expect(error.code).toBe("provider_reply_lost");
    const [lease] = await prisma.environmentLease.findMany({ where: { environmentId: w.environment.id } });
    expect(lease).toMatchObject({
      status: "pending_cleanup",
      providerLeaseId: null,
      releasedAt: null,
      metadata: {
        sandboxDestroy: { schema: DESTROY_INTENT_SCHEMA, leaseId: lease!.id, runId, companyId: w.company.id, pluginId: "builtin.fake", providerLeaseId: null, reason: "acquire_unconfirmed" },
        failure: { code: "provider_reply_lost" },
      },
    });
    expect(readDestroyIntent(lease!.metadata, lease!)).toMatchObject({ kind: "present" });
    // The provider did make a sandbox; the sweep's route to it is acquire again with the lease id.
    expect([...plugin.store.values()].map((sandbox) => sandbox.leaseId)).toEqual([lease!.id]);
    const again = await plugin.acquire!({ companyId: w.company.id, environmentId: w.environment.id, leaseId: lease!.id, runId, config: w.environment.config });
    expect(plugin.store.get(again.identity.providerLeaseId)?.leaseId).toBe(lease!.id);
    expect(plugin.store.size).toBe(1);
    // A pending lease does not block the next ephemeral acquisition.
    await expect(acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun()))).resolves.toMatchObject({ reused: false });
  });

  it("a refusal that would repeat (invalid configuration) is not retried; the lease is still left pending_cleanup with its destroy intent", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    plugin.faults.failTimes("acquire", 1, new DomainError("invalid", "provider_config_invalid", "bad config"));
    const error = await rejection(acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun())));
    expect(error.code).toBe("provider_config_invalid");
    expect(plugin.calls.filter((c) => c.op === "acquire")).toHaveLength(1);
    const [lease] = await prisma.environmentLease.findMany({ where: { environmentId: w.environment.id } });
    expect(lease).toMatchObject({ status: "pending_cleanup", metadata: { sandboxDestroy: { leaseId: lease!.id }, failure: { code: "provider_config_invalid" } } });
  });

  it("the destroy intent of a lost acquisition leads a later release to the sweep, never to a guess", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    plugin.faults.failTimes("acquire", 2);
    const runId = await w.newRun();
    await rejection(acquireLease(prisma, registryOf(plugin), w.acquireInput(runId)));
    const [lease] = await prisma.environmentLease.findMany({ where: { environmentId: w.environment.id } });
    plugin.calls.length = 0;
    // No allocation was ever named: nothing is destroyed or stopped on a guess; the lease stays pending.
    await expect(releaseLeaseByPolicy(prisma, registryOf(plugin), { leaseId: lease!.id, runId, outcome: "failed" })).resolves.toMatchObject({
      kind: "pending_cleanup",
      code: "lease_not_allocated",
    });
    expect(plugin.calls).toEqual([]);
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease!.id } })).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: null, cleanupAttempts: 0 });
  });

  it("R-EX-6 refuses when the environment's plugin is not registered, without writing a lease (another plugin of the same provider is not used)", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma, { pluginId: "vendor.fake-a" });
    const other = createFakeProvider({ pluginId: "vendor.fake-b" });
    const error = await rejection(acquireLease(prisma, registryOf(other), w.acquireInput(await w.newRun())));
    expect(error).toMatchObject({ kind: "unavailable", code: "provider_plugin_unavailable" });
    expect(other.calls).toEqual([]);
    expect(await prisma.environmentLease.count({ where: { environmentId: w.environment.id } })).toBe(0);
  });

  it("refuses bad input with a clear error and writes nothing", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const runId = await w.newRun();
    await expect(acquireLease(prisma, registryOf(plugin), { ...w.acquireInput(runId), environmentId: "nope" })).rejects.toMatchObject({ code: "lease_input_invalid" });
    await expect(acquireLease(prisma, registryOf(plugin), { ...w.acquireInput(runId), policy: "forever" as never })).rejects.toMatchObject({ code: "lease_input_invalid" });
    // Rows of another company are not found.
    const stranger = await buildLeaseWorld(prisma);
    await expect(acquireLease(prisma, registryOf(plugin), { ...w.acquireInput(runId), environmentId: stranger.environment.id })).rejects.toMatchObject({ kind: "not_found" });
    await expect(acquireLease(prisma, registryOf(plugin), { ...w.acquireInput(runId), runId: await stranger.newRun() })).rejects.toMatchObject({ kind: "not_found" });
    expect(await prisma.environmentLease.count({ where: { companyId: w.company.id } })).toBe(0);
    expect(plugin.calls).toEqual([]);
  });
});

describe("acquireLease: reuse_by_environment", () => {
  it("reuses a released lease with a confirmed receipt: CAS to active, rebinds run and issue, resumes with the recorded identity", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const { acquired, plugin, registry } = await releasedReusableLease(w);
    const identity = plugin.store.get(acquired.lease.providerLeaseId!)!.identity;
    expect(plugin.store.get(acquired.lease.providerLeaseId!)!.state).toBe("stopped");

    const nextRun = await w.newRun();
    const reused = await acquireLease(prisma, registry, w.acquireInput(nextRun, { policy: "reuse_by_environment" }));
    expect(reused.reused).toBe(true);
    expect(reused.lease).toMatchObject({ id: acquired.lease.id, status: "active", runId: nextRun, releasedAt: null });
    expect(reused.handle).toEqual(acquired.handle);
    expect(plugin.store.get(acquired.lease.providerLeaseId!)!.state).toBe("running");
    expect(plugin.store.get(acquired.lease.providerLeaseId!)!.identity).toEqual(identity);
    // The receipt is consumed: once running again it proves nothing (R-EX-5).
    expect(reused.lease.metadata).not.toHaveProperty("sandboxStopAndRetainReceipt");
    expect(plugin.calls.filter((c) => c.op === "acquire")).toHaveLength(1);
  });

  it("never reuses a released lease without a confirmed receipt (unconfirmed stop, receipt removed, malformed receipt)", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const registry = registryOf(plugin);
    // (1) A stop that stayed unconfirmed: the lease stays pending_cleanup, not a candidate.
    plugin.faults.unconfirmedStop(1);
    const runA = await w.newRun();
    const a = await acquireLease(prisma, registry, w.acquireInput(runA, { policy: "reuse_by_environment" }));
    expect((await releaseLeaseByPolicy(prisma, registry, { leaseId: a.lease.id, runId: runA, outcome: "committed" })).kind).toBe("pending_cleanup");
    // (2) and (3): released leases whose receipt is missing or malformed (written by hand).
    const b = await releasedReusableLease(w, plugin);
    await prisma.$executeRaw`UPDATE environment_leases SET metadata = metadata - 'sandboxStopAndRetainReceipt' WHERE id = ${b.acquired.lease.id}::uuid`;
    const c = await releasedReusableLease(w, plugin);
    await prisma.$executeRaw`UPDATE environment_leases SET metadata = jsonb_set(metadata, '{sandboxStopAndRetainReceipt,schema}', '"copyback.sandbox-stop-and-retain-receipt.v9"') WHERE id = ${c.acquired.lease.id}::uuid`;

    const fresh = await acquireLease(prisma, registry, w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
    expect(fresh.reused).toBe(false);
    expect([a.lease.id, b.acquired.lease.id, c.acquired.lease.id]).not.toContain(fresh.lease.id);
    expect(plugin.calls.filter((call) => call.op === "resume")).toEqual([]);
    const statuses = await prisma.environmentLease.findMany({ where: { id: { in: [a.lease.id, b.acquired.lease.id, c.acquired.lease.id] } }, select: { status: true } });
    expect(statuses.map((s) => s.status).sort()).toEqual(["pending_cleanup", "released", "released"]);
  });

  it("R-EX-6 a lease pinned to plugin A is never resumed by plugin B with the same provider name", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma, { pluginId: "vendor.fake-a" });
    const pluginA = createFakeProvider({ pluginId: "vendor.fake-a" });
    const { acquired } = await releasedReusableLease(w, pluginA);

    // The environment now names plugin B; A is gone from the registry.
    await prisma.environment.update({ where: { id: w.environment.id }, data: { pluginId: "vendor.fake-b" } });
    const pluginB = createFakeProvider({ pluginId: "vendor.fake-b" });
    const next = await acquireLease(prisma, registryOf(pluginB), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
    expect(next.reused).toBe(false);
    expect(next.lease.pluginId).toBe("vendor.fake-b");
    expect(pluginB.calls.map((c) => [c.op, c.leaseId])).toEqual([["acquire", next.lease.id]]);
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: acquired.lease.id } })).toMatchObject({ status: "released", pluginId: "vendor.fake-a" });
  });

  it("R-EX-5 a resume whose identity does not match records a stop-only intent (never just failed), stops and retains the sandbox, never reuses it again, and allocates a new one", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const { acquired, plugin, registry } = await releasedReusableLease(w);
    // The sandbox was replaced behind our back: same provider lease id, another fingerprint.
    plugin.store.get(acquired.lease.providerLeaseId!)!.identity = { providerLeaseId: acquired.lease.providerLeaseId!, fingerprint: "fake:replaced" };
    plugin.calls.length = 0;

    const nextRun = await w.newRun();
    const next = await acquireLease(prisma, registry, w.acquireInput(nextRun, { policy: "reuse_by_environment" }));
    expect(next.reused).toBe(false);
    expect(next.lease.id).not.toBe(acquired.lease.id);
    // The resume failed, so the sandbox may be running: stopped through its stop-only intent.
    expect(plugin.calls.map((c) => [c.op, c.leaseId])).toEqual([["resume", acquired.lease.id], ["stopLease", acquired.lease.id], ["acquire", next.lease.id]]);
    const old = await prisma.environmentLease.findUniqueOrThrow({ where: { id: acquired.lease.id } });
    expect(old).toMatchObject({
      status: "released",
      metadata: { reuseRefused: { code: "provider_identity_mismatch" }, sandboxStopAndRetainReceipt: { method: "builtin.stopLease" } },
    });

    // Its stop proven again, it is still never offered for reuse.
    plugin.calls.length = 0;
    const third = await acquireLease(prisma, registry, w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
    expect(third.lease.id).not.toBe(acquired.lease.id);
    expect(plugin.calls.filter((c) => c.leaseId === acquired.lease.id)).toEqual([]);
  });

  it("R-EX-5 a failed resume whose stop is not confirmed leaves the lease pending_cleanup with its stop-only intent for the sweep", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const { acquired, plugin, registry } = await releasedReusableLease(w);
    plugin.faults.loseReply("resume").unconfirmedStop(1);
    const nextRun = await w.newRun();
    const next = await acquireLease(prisma, registry, w.acquireInput(nextRun, { policy: "reuse_by_environment" }));
    expect(next.reused).toBe(false);
    // The lost reply did resume the sandbox: it runs until the sweep's stop is confirmed.
    expect(plugin.store.get(acquired.lease.providerLeaseId!)!.state).toBe("running");
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: acquired.lease.id } })).toMatchObject({
      status: "pending_cleanup",
      runId: nextRun,
      cleanupAttempts: 1,
      cleanupClaimedBy: null,
      metadata: {
        sandboxStopAndRetain: { leaseId: acquired.lease.id, runId: nextRun, providerLeaseId: acquired.lease.providerLeaseId, pluginId: "builtin.fake" },
        reuseRefused: { code: "provider_reply_lost" },
        failure: { code: "stop_unconfirmed" },
      },
    });
  });

  describe("a lease that holds files for recovery is left out by the acquisition query", () => {
    const openAction = (w: World, leaseId: string | null, evidence: object = {}, status: "active" | "escalated" | "resolved" = "active") =>
      db.prisma().issueRecoveryAction.create({
        data: { companyId: w.company.id, issueId: w.issue.id, leaseId, cause: "test_hold", fingerprint: `fp-${Math.random()}`, ownerType: "board", status, evidence },
      });

    it("R-EX-5 an open recovery action naming the lease (lease_id, or its evidence's leaseIds, active or escalated) holds it; a resolved one does not", async () => {
      const prisma = db.prisma();
      const w = await buildLeaseWorld(prisma);
      const plugin = createFakeProvider();
      const byColumn = await releasedReusableLease(w, plugin);
      await openAction(w, byColumn.acquired.lease.id);
      const byEvidence = await releasedReusableLease(w, plugin);
      await openAction(w, null, { leaseIds: ["00000000-0000-4000-8000-000000000000", byEvidence.acquired.lease.id] }, "escalated");
      const resolved = await releasedReusableLease(w, plugin);
      await openAction(w, resolved.acquired.lease.id, { leaseIds: [resolved.acquired.lease.id] }, "resolved");
      plugin.calls.length = 0;

      const next = await acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
      expect(next).toMatchObject({ reused: true, lease: { id: resolved.acquired.lease.id } });
      expect(plugin.calls.map((c) => [c.op, c.leaseId])).toEqual([["resume", resolved.acquired.lease.id]]);
      const after = await prisma.environmentLease.findMany({ where: { id: { in: [byColumn.acquired.lease.id, byEvidence.acquired.lease.id] } } });
      expect(after.map((l) => l.status)).toEqual(["released", "released"]);
      // With every remaining candidate held, the environment gets a new allocation.
      const fresh = await acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
      expect(fresh.reused).toBe(false);
      expect([byColumn.acquired.lease.id, byEvidence.acquired.lease.id]).not.toContain(fresh.lease.id);
    });

    it("R-EX-4 the lease of a failed, cancelled or timed-out run that did not commit is held; a committed run's is not", async () => {
      const prisma = db.prisma();
      const w = await buildLeaseWorld(prisma);
      const plugin = createFakeProvider();
      const held: string[] = [];
      for (const status of ["failed", "cancelled", "timed_out"] as const) {
        const { acquired, runId } = await releasedReusableLease(w, plugin);
        await prisma.heartbeatRun.update({ where: { id: runId }, data: { status } });
        held.push(acquired.lease.id);
      }
      // A failed run whose finalization had committed holds nothing (its files are on the host).
      const committed = await releasedReusableLease(w, plugin);
      await prisma.heartbeatRun.update({ where: { id: committed.runId }, data: { status: "failed" } });
      await prisma.nativeRunFinalization.create({ data: { companyId: w.company.id, runId: committed.runId, issueId: w.issue.id, phase: "committed" } });

      const candidates = await prisma.$queryRaw<{ id: string }[]>(reuseCandidatesSql({ companyId: w.company.id, environmentId: w.environment.id, executionWorkspaceId: w.workspace.id }));
      expect(candidates.map((c) => c.id)).toEqual([committed.acquired.lease.id]);
      const next = await acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
      expect(next).toMatchObject({ reused: true, lease: { id: committed.acquired.lease.id } });
      for (const id of held) expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "released" });
    });

    it("R-ORP-3 the lease of a running run whose accepted result's finalization is unsettled (result_accepted, workspace_finalizing, arbitrating, retryable_failure) is held; before a result (observed) or once committed it is not", async () => {
      const prisma = db.prisma();
      const w = await buildLeaseWorld(prisma);
      const plugin = createFakeProvider();
      const held: string[] = [];
      const resultOf = async (runId: string) =>
        (await prisma.nativeRunResult.create({ data: { companyId: w.company.id, runId, issueId: w.issue.id, agentId: w.agent.id, schemaStatus: "accepted", payload: {}, canonicalSha256: runId.replaceAll("-", "").padEnd(64, "0"), dedupeKey: "finish" } })).id;
      for (const phase of ["result_accepted", "workspace_finalizing", "arbitrating", "retryable_failure"] as const) {
        const { acquired, runId } = await releasedReusableLease(w, plugin);
        await prisma.nativeRunFinalization.create({ data: { companyId: w.company.id, runId, issueId: w.issue.id, phase, resultId: await resultOf(runId) } });
        held.push(acquired.lease.id);
      }
      // Both allocated before either is released (a released unheld lease would be reused).
      const registry = registryOf(plugin);
      const allocate = async () => {
        const runId = await w.newRun();
        return { runId, acquired: await acquireLease(prisma, registry, w.acquireInput(runId, { policy: "reuse_by_environment" })) };
      };
      const observed = await allocate();
      const committed = await allocate();
      for (const { runId, acquired } of [observed, committed]) await releaseLeaseByPolicy(prisma, registry, { leaseId: acquired.lease.id, runId, outcome: "committed" });
      await prisma.nativeRunFinalization.create({ data: { companyId: w.company.id, runId: observed.runId, issueId: w.issue.id, phase: "observed" } });
      await prisma.nativeRunFinalization.create({ data: { companyId: w.company.id, runId: committed.runId, issueId: w.issue.id, phase: "committed", resultId: await resultOf(committed.runId) } });

      const candidates = await prisma.$queryRaw<{ id: string }[]>(reuseCandidatesSql({ companyId: w.company.id, environmentId: w.environment.id, executionWorkspaceId: w.workspace.id }));
      expect(candidates.map((c) => c.id).sort()).toEqual([observed.acquired.lease.id, committed.acquired.lease.id].sort());
      for (let i = 0; i < 2; i += 1) {
        const next = await acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
        expect(next.reused).toBe(true);
        expect(held).not.toContain(next.lease.id);
      }
      const fresh = await acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
      expect(fresh.reused).toBe(false);
      for (const id of held) expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: "released" });
    });

    it("more held leases than the candidate window never hide a reusable one (the query leaves them out, not a later check)", async () => {
      const prisma = db.prisma();
      const w = await buildLeaseWorld(prisma);
      const plugin = createFakeProvider();
      const heldIds: string[] = [];
      for (let i = 0; i < 12; i += 1) {
        const { runId, acquired } = await releasedReusableLease(w, plugin);
        await prisma.heartbeatRun.update({ where: { id: runId }, data: { status: "failed" } });
        heldIds.push(acquired.lease.id);
      }
      const reusable = await releasedReusableLease(w, plugin);
      expect(heldIds).not.toContain(reusable.acquired.lease.id);
      // The held leases were released most recently: they fill the newest-first window.
      await prisma.$executeRaw`UPDATE environment_leases SET released_at = now() + interval '1 hour' WHERE id = ANY(${heldIds}::uuid[])`;
      plugin.calls.length = 0;
      const next = await acquireLease(prisma, registryOf(plugin), w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
      expect(next).toMatchObject({ reused: true, lease: { id: reusable.acquired.lease.id } });
      expect(plugin.calls.map((c) => c.op)).toEqual(["resume"]);
    });

    it("the hold is read through indexes, not by scanning open actions (5,000 open actions naming other leases)", async () => {
      const prisma = db.prisma();
      const w = await buildLeaseWorld(prisma);
      await releasedReusableLease(w);
      // Many open actions of other leases: half name theirs in lease_id, half only in evidence.
      await prisma.$executeRaw`
        WITH leases AS (
          INSERT INTO environment_leases (id, company_id, environment_id, provider, plugin_id, lease_policy, status, metadata, updated_at)
          SELECT gen_random_uuid(), ${w.company.id}::uuid, ${w.environment.id}::uuid, 'fake', 'builtin.fake', 'ephemeral', 'destroyed', '{}', now()
          FROM generate_series(1, 2500) RETURNING id)
        INSERT INTO issue_recovery_actions (id, company_id, issue_id, lease_id, cause, fingerprint, owner_type, status, evidence, updated_at)
        SELECT gen_random_uuid(), ${w.company.id}::uuid, ${w.issue.id}::uuid, id, 'test_hold', 'col-' || id, 'board'::recovery_owner_type, 'active'::recovery_status, jsonb_build_object('leaseIds', jsonb_build_array(id::text)), now() FROM leases
        UNION ALL
        SELECT gen_random_uuid(), ${w.company.id}::uuid, ${w.issue.id}::uuid, NULL, 'test_hold', 'ev-' || g, 'board'::recovery_owner_type, 'active'::recovery_status, jsonb_build_object('leaseIds', jsonb_build_array(gen_random_uuid()::text)), now() FROM generate_series(1, 2500) g`;
      await prisma.$executeRaw`ANALYZE issue_recovery_actions`;
      await prisma.$executeRaw`ANALYZE environment_leases`;
      const explain = Prisma.sql`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) ${reuseCandidatesSql({ companyId: w.company.id, environmentId: w.environment.id, executionWorkspaceId: w.workspace.id })}`;
      const plan = (await prisma.$queryRaw<{ "QUERY PLAN": string }[]>(explain)).map((r) => r["QUERY PLAN"]).join("\n");
      console.log(`[reuse candidates plan, 5,000 open actions]\n${plan}`);
      expect(plan).toContain("issue_recovery_actions_open_by_lease");
      expect(plan).not.toMatch(/Seq Scan on environment_leases/);
      // The evidence probe (actions naming several leases) is a parameterized probe of
      // issue_recovery_actions_open_lease_ids once open actions are many (100,000 in a scratch
      // database: a GIN bitmap scan per candidate, 0.1 ms); at 5,000 the planner prefers reading
      // the open actions, a few milliseconds. Either way the held leases never reach the window.
    });

    it("a hold written after the selection still wins: the compare-and-set repeats the condition", async () => {
      const prisma = db.prisma();
      const w = await buildLeaseWorld(prisma);
      const plugin = createFakeProvider();
      const { acquired } = await releasedReusableLease(w, plugin);
      const { metadata } = await prisma.environmentLease.findUniqueOrThrow({ where: { id: acquired.lease.id } });
      const receipt = (metadata as Record<string, unknown>).sandboxStopAndRetainReceipt;
      await openAction(w, acquired.lease.id);
      const won = await transitionLease(prisma, {
        leaseId: acquired.lease.id,
        from: ["released"],
        to: "active",
        expectMetadata: { key: "sandboxStopAndRetainReceipt", value: receipt },
        notHeld: true,
      });
      expect(won).toBe(false);
      expect((await prisma.environmentLease.findUniqueOrThrow({ where: { id: acquired.lease.id } })).status).toBe("released");
    });
  });

  it("concurrent acquisitions reuse one released lease at most once (compare-and-set)", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const { acquired, plugin, registry } = await releasedReusableLease(w);
    const runs = await Promise.all(Array.from({ length: 5 }, () => w.newRun()));
    const results = await Promise.all(runs.map((runId) => acquireLease(prisma, registry, w.acquireInput(runId, { policy: "reuse_by_environment" }))));
    const reused = results.filter((r) => r.reused);
    expect(reused).toHaveLength(1);
    expect(reused[0]!.lease.id).toBe(acquired.lease.id);
    expect(new Set(results.map((r) => r.lease.id)).size).toBe(5);
    expect(plugin.calls.filter((c) => c.op === "resume")).toHaveLength(1);
    const row = await prisma.environmentLease.findUniqueOrThrow({ where: { id: acquired.lease.id } });
    expect(row.runId).toBe(reused[0]!.lease.runId);
  });
});
