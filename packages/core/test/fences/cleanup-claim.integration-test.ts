// Fence: the lease cleanup claim (15 min; FENCES.md row 8, R-EX-5). The stale actor is a second
// worker's cleanup sweep that selected the same due `pending_cleanup` lease and read it before the
// first one took the claim: its own early check ("claimed") saw nothing, the intent is the same,
// the lease is due. Only the claim's compare-and-set (cleanup_claimed_until) keeps it from sending
// a second stop while the first is in flight. The two claims are placed at the same moment by a
// table lock both writes wait behind (fences-fixture.ts).
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, releaseLeaseByPolicy } from "../../src/leases/index";
import { createFakeProvider } from "../../src/providers/fake/index";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { buildLeaseWorld, registryOf } from "../leases/lease-fixture";
import { holdTableLock, waitForLockWaiters } from "./fences-fixture";

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
});
