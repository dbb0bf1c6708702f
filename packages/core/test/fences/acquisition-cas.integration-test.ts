// Fence: acquisition's compare-and-set (acquire-lease.ts reuseReleasedLease -> transitionLease;
// FENCES.md). The stale actor is a run whose acquisition read a reusable released lease and
// writes its reuse after the lease changed: another run took it meanwhile, or a hold naming it was
// opened meanwhile. The read was right when it was made; only the write's compare (status, the
// stop receipt it read, the held-lease rule again) can refuse. The change is placed exactly between
// the read and the write by a table lock the write waits behind (fences-fixture.ts).
import { describe, expect, it } from "vitest";
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, releaseLeaseByPolicy } from "../../src/leases/index";
import { LEASE_METADATA_KEYS } from "../../src/leases/lease-metadata";
import { createFakeProvider } from "../../src/providers/fake/index";
import { openExportRetryExhaustedAction } from "../../src/records/actions";
import { buildLeaseWorld, registryOf } from "../leases/lease-fixture";
import { holdTableLock, waitForLockWaiters } from "./fences-fixture";

const db = useTestDatabase({ poolSize: 8 });

async function releasedLease() {
  const prisma = db.prisma();
  const w = await buildLeaseWorld(prisma);
  const plugin = createFakeProvider();
  const registry = registryOf(plugin);
  const runId = await w.newRun();
  const acquired = await acquireLease(prisma, registry, w.acquireInput(runId, { policy: "reuse_by_environment" }));
  expect(await releaseLeaseByPolicy(prisma, registry, { leaseId: acquired.lease.id, runId, outcome: "committed" })).toMatchObject({ kind: "stopped_and_retained" });
  plugin.calls.length = 0;
  return { w, plugin, registry, runId, leaseId: acquired.lease.id, providerLeaseId: acquired.lease.providerLeaseId };
}

describe("fence: acquisition's compare-and-set", () => {
  it("R-ORP-3: another run reused the lease between this acquisition's read and its write: the write refuses, the lease stays that run's, this run gets a new allocation", async () => {
    const prisma = db.prisma();
    const { w, plugin, registry, leaseId } = await releasedLease();
    const winner = await w.newRun();
    const lock = await holdTableLock(db.url(), "environment_leases");
    const late = acquireLease(prisma, registry, w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
    try {
      await waitForLockWaiters(db.url(), "environment_leases");
      // The winner's reuse, as its own compare-and-set writes it (status, run, receipt consumed).
      await lock.client.query(
        `UPDATE environment_leases SET status = 'active', released_at = NULL, run_id = $2::uuid, metadata = metadata - $3::text, updated_at = now() WHERE id = $1::uuid AND status = 'released'`,
        [leaseId, winner, LEASE_METADATA_KEYS.stopReceipt],
      );
    } finally {
      await lock.release();
    }
    const acquired = await late;
    expect(acquired.reused).toBe(false);
    expect(acquired.lease.id).not.toBe(leaseId);
    expect(plugin.calls.filter((c) => c.leaseId === leaseId)).toEqual([]);
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: leaseId } })).toMatchObject({ status: "active", runId: winner });
  });

  it("R-ORP-3, R-EX-4: a hold opened between this acquisition's read and its write: the write refuses, the held sandbox is neither resumed nor rebound", async () => {
    const prisma = db.prisma();
    const { w, plugin, registry, runId, leaseId, providerLeaseId } = await releasedLease();
    const lock = await holdTableLock(db.url(), "environment_leases");
    const late = acquireLease(prisma, registry, w.acquireInput(await w.newRun(), { policy: "reuse_by_environment" }));
    try {
      await waitForLockWaiters(db.url(), "environment_leases");
      // The hold is written through its real writer on the pool (no lease row is written).
      await withTransaction(prisma, (tx) =>
        openExportRetryExhaustedAction(tx, { companyId: w.company.id, issueId: w.issue.id, runId, resultId: null, leaseId, providerLeaseId, pluginId: "builtin.fake", attempts: 3, lastFailureCode: "provider_export_failed" }),
      );
    } finally {
      await lock.release();
    }
    const acquired = await late;
    expect(acquired.reused).toBe(false);
    expect(acquired.lease.id).not.toBe(leaseId);
    expect(plugin.calls.filter((c) => c.leaseId === leaseId)).toEqual([]);
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: leaseId } })).toMatchObject({ status: "released", runId });
  });
});
