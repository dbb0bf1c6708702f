// Fence: the lease cleanup claim (15 min; FENCES.md row 8, R-EX-5). The stale actor is a second
// worker's cleanup sweep that selected the same due `pending_cleanup` lease and read it before the
// first one took the claim: its own early check ("claimed") saw nothing, the intent is the same,
// the lease is due. Only the claim's compare-and-set (cleanup_claimed_until) keeps it from sending
// a second stop while the first is in flight. The two claims are placed at the same moment by a
// table lock both writes wait behind (fences-fixture.ts).
//
// The takeover's due-time condition (dueOnly, R-EX-5) is the second half: a sweep that read the
// lease while it was due takes its claim only while it is still due, so when the first worker's
// whole attempt (claim, failed stop, counted attempt, claim given back) happened between the
// second one's read and its claim, the free claim does not let it repeat that attempt.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, releaseLeaseByPolicy } from "../../src/leases/index";
import { createFakeProvider } from "../../src/providers/fake/index";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { buildLeaseWorld, registryOf } from "../leases/lease-fixture";
import { gatedRawWrites, holdTableLock, waitForLockWaiters } from "./fences-fixture";

const db = useTestDatabase({ poolSize: 8 });

describe("fence: the lease cleanup claim", () => {
  it("R-EX-5: two sweeps that selected and read one due pending lease: exactly one takes the claim and stops the sandbox; the other sends nothing", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const registry = registryOf(plugin);
    const runId = await w.newRun();
    const { lease } = await acquireLease(prisma, registry, w.acquireInput(runId, { policy: "reuse_by_environment" }));
    // The live release's stop fails once: the lease is left pending, its claim given back.
    plugin.faults.failTimes("stopLease", 1);
    expect(await releaseLeaseByPolicy(prisma, registry, { leaseId: lease.id, runId, outcome: "committed" })).toMatchObject({ kind: "pending_cleanup", code: "stop_failed" });
    await prisma.$executeRaw`UPDATE environment_leases SET next_cleanup_at = now() - interval '1 second' WHERE id = ${lease.id}::uuid`;
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: null });

    const first = leaseCleanupSweep({ db: prisma, registry, controller: { host: "worker-a", pid: 1 } });
    const second = leaseCleanupSweep({ db: prisma, registry, controller: { host: "worker-b", pid: 2 } });
    const [unit] = (await first.due(100)).filter((u) => u.leaseId === lease.id);
    expect(unit).toBeDefined();
    plugin.calls.length = 0;

    const lock = await holdTableLock(db.url(), "environment_leases");
    const outcomes = Promise.all([first.handle(unit!), second.handle(unit!)]);
    try {
      await waitForLockWaiters(db.url(), "environment_leases", 2);
    } finally {
      await lock.release();
    }
    expect((await outcomes).sort()).toEqual(["cleanup_claimed", "stopped_and_retained"]);
    expect(plugin.calls.filter((c) => c.op === "stopLease")).toHaveLength(1);
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "released", cleanupClaimedBy: null, cleanupAttempts: 1 });
  });

  it("R-EX-5: a sweep that read the due lease before another worker's failed attempt was counted does not repeat it: the claim is free again, but the lease is no longer due; one stop, one attempt", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const registry = registryOf(plugin);
    const runId = await w.newRun();
    const { lease } = await acquireLease(prisma, registry, w.acquireInput(runId, { policy: "reuse_by_environment" }));
    plugin.faults.failTimes("stopLease", 1);
    expect(await releaseLeaseByPolicy(prisma, registry, { leaseId: lease.id, runId, outcome: "committed" })).toMatchObject({ kind: "pending_cleanup", code: "stop_failed" });
    await prisma.$executeRaw`UPDATE environment_leases SET next_cleanup_at = now() - interval '1 second' WHERE id = ${lease.id}::uuid`;
    const before = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(before).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: null, cleanupAttempts: 1 });

    // Worker b reads the lease (due, unclaimed) and stops before its claim's write.
    const late = gatedRawWrites(prisma);
    const first = leaseCleanupSweep({ db: prisma, registry, controller: { host: "worker-a", pid: 1 } });
    const second = leaseCleanupSweep({ db: late.db, registry, controller: { host: "worker-b", pid: 2 } });
    const [unit] = (await first.due(100)).filter((u) => u.leaseId === lease.id);
    expect(unit).toBeDefined();
    plugin.calls.length = 0;
    const lateOutcome = second.handle(unit!);
    await late.reached;

    // Worker a's whole attempt: its stop fails, the attempt is counted, the claim given back.
    plugin.faults.failTimes("stopLease", 1);
    expect(await first.handle(unit!)).toBe("stop_failed");
    const counted = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(counted).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: null, cleanupAttempts: 2 });
    expect(counted.nextCleanupAt!.getTime()).toBeGreaterThan(Date.now());

    late.open();
    expect(await lateOutcome).toBe("cleanup_claimed");
    expect(plugin.calls.filter((c) => c.op === "stopLease")).toHaveLength(1);
    const after = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: null, cleanupAttempts: 2, nextCleanupAt: counted.nextCleanupAt });
  });

  it("R-EX-5: the run's repeated release while another worker holds the live claim (its stop in flight) sends nothing and says why: pending cleanup_claimed, the lease and claim untouched", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const registry = registryOf(plugin);
    const runId = await w.newRun();
    const { lease } = await acquireLease(prisma, registry, w.acquireInput(runId, { policy: "reuse_by_environment" }));
    plugin.faults.failTimes("stopLease", 1);
    expect(await releaseLeaseByPolicy(prisma, registry, { leaseId: lease.id, runId, outcome: "committed" })).toMatchObject({ kind: "pending_cleanup", code: "stop_failed" });
    // Another worker's sweep took the claim and its stop request is in flight.
    await prisma.$executeRaw`UPDATE environment_leases SET cleanup_claimed_by = 'sweep:worker-a:1', cleanup_claimed_until = now() + interval '15 minutes' WHERE id = ${lease.id}::uuid`;
    const claimed = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    plugin.calls.length = 0;

    expect(await releaseLeaseByPolicy(prisma, registry, { leaseId: lease.id, runId, outcome: "committed" })).toEqual({
      kind: "pending_cleanup",
      leaseId: lease.id,
      code: "cleanup_claimed",
      message: "Another stop of this lease is in progress.",
    });
    expect(plugin.calls.filter((c) => c.op === "stopLease")).toHaveLength(0);
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toEqual(claimed);
  });
});
