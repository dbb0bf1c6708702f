// Fence: request ids on intents and retry receipts (FENCES.md row 9, R-EX-5, R-SO-2). The stale
// actor is a stop request of an older attempt whose reply comes late: its claim expired, another
// worker's sweep finished that stop, and an export-only retry then recorded its own stop-only
// intent (a new request id) to resume the sandbox. The late reply is a confirmed receipt for the
// old request, and the lease is `pending_cleanup` again, as the late writer expects; only its own
// conditional write on the intent it sent (the request id it names) keeps it from marking the
// resumed sandbox stopped and releasable.
//
// The export retry's own write (recordExportRetryIntent) is the other end of the same fence: it
// pins only a lease that is released with the exact stopped receipt the retry read. A retry that
// read a lease without one, or that lost the compare-and-set to another retry, writes nothing.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { withTransaction } from "@copyback/db/client";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease, CLEANUP_CLAIM_MS, releaseLeaseByPolicy } from "../../src/leases/index";
import { LEASE_METADATA_KEYS, readStopIntent, readStopReceipt } from "../../src/leases/lease-metadata";
import { recordExportRetryIntent } from "../../src/leases/stop-intent";
import { createFakeProvider } from "../../src/providers/fake/index";
import type { StopReceipt } from "../../src/providers/types";
import { leaseCleanupSweep } from "../../src/recovery/sweeps/lease-cleanup-sweep";
import { buildLeaseWorld, registryOf } from "../leases/lease-fixture";
import { gate } from "./fences-fixture";

const db = useTestDatabase({ poolSize: 8 });

describe("fence: request ids on intents and receipts", () => {
  it("R-EX-5, R-SO-2: a late confirmed receipt of an older stop request never releases the lease an export-only retry re-pinned with a new request id", async () => {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const registry = registryOf(plugin);
    const runId = await w.newRun();
    const { lease } = await acquireLease(prisma, registry, w.acquireInput(runId, { policy: "reuse_by_environment" }));

    // The first stop request hangs until the test lets its (late) reply through.
    const stop = plugin.stopLease!.bind(plugin);
    const lateReply = gate();
    let calls = 0;
    plugin.stopLease = async (handle, request): Promise<StopReceipt> => {
      calls += 1;
      if (calls === 1) await lateReply.promise;
      return stop(handle, request);
    };
    const late = releaseLeaseByPolicy(prisma, registry, { leaseId: lease.id, runId, outcome: "committed" });
    const deadline = Date.now() + 10_000;
    while (calls === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const pending = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    const oldIntent = readStopIntent(pending.metadata, pending);
    if (oldIntent.kind !== "present") throw new Error("no stop intent recorded");

    // Its 15-minute claim runs out; another worker's sweep finishes the same request.
    await prisma.$executeRaw`UPDATE environment_leases SET cleanup_claimed_until = now() - interval '1 second' WHERE id = ${lease.id}::uuid`;
    const sweep = leaseCleanupSweep({ db: prisma, registry, controller: { host: "worker-b", pid: 2 } });
    const [unit] = (await sweep.due(100)).filter((u) => u.leaseId === lease.id);
    expect(await sweep.handle(unit!)).toBe("stopped_and_retained");
    const stopped = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(readStopReceipt(stopped.metadata)).toMatchObject({ kind: "present", value: { requestId: oldIntent.value.requestId } });

    // An export-only retry pins the lease with its own request before resuming the sandbox.
    const retryRequestId = randomUUID();
    const retryIntent = await withTransaction(prisma, (tx) =>
      recordExportRetryIntent(tx, { lease: stopped, providerLeaseId: stopped.providerLeaseId!, requestId: retryRequestId, claim: { by: "export-retry:test", forMs: CLEANUP_CLAIM_MS } }),
    );
    expect(retryIntent?.requestId).toBe(retryRequestId);

    // The old request's confirmed reply arrives now.
    lateReply.open();
    expect((await late).kind).toBe("pending_cleanup");
    const after = await prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.status).toBe("pending_cleanup");
    expect(readStopIntent(after.metadata, after)).toMatchObject({ kind: "present", value: { requestId: retryRequestId } });
    expect((after.metadata as Record<string, unknown>)[LEASE_METADATA_KEYS.stopReceipt]).toBeUndefined();
    expect(after.cleanupClaimedBy).toBe("export-retry:test");
  });

  /** A reusable lease stopped by its run's release: `released` with its confirmed stop receipt. */
  async function stoppedLease() {
    const prisma = db.prisma();
    const w = await buildLeaseWorld(prisma);
    const plugin = createFakeProvider();
    const registry = registryOf(plugin);
    const runId = await w.newRun();
    const { lease } = await acquireLease(prisma, registry, w.acquireInput(runId, { policy: "reuse_by_environment" }));
    expect((await releaseLeaseByPolicy(prisma, registry, { leaseId: lease.id, runId, outcome: "committed" })).kind).toBe("stopped_and_retained");
    return prisma.environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
  }

  const retryIntent = (lease: Awaited<ReturnType<typeof stoppedLease>>, requestId: string, by = "export-retry:test") =>
    withTransaction(db.prisma(), (tx) => recordExportRetryIntent(tx, { lease, providerLeaseId: lease.providerLeaseId!, requestId, claim: { by, forMs: CLEANUP_CLAIM_MS } }));

  it("R-EX-5: an export-only retry pins only a stopped, retained sandbox: a released lease without its stopped receipt (absent, JSON null, or no metadata document) gets no intent, and its row is left exactly as it was", async () => {
    const prisma = db.prisma();
    const stopped = await stoppedLease();
    const variants: Record<string, string> = {
      absent: `UPDATE environment_leases SET metadata = metadata - '${LEASE_METADATA_KEYS.stopReceipt}' WHERE id = $1::uuid`,
      "json null": `UPDATE environment_leases SET metadata = jsonb_set(metadata, '{${LEASE_METADATA_KEYS.stopReceipt}}', 'null'::jsonb) WHERE id = $1::uuid`,
      "no document": `UPDATE environment_leases SET metadata = 'null'::jsonb WHERE id = $1::uuid`,
    };
    for (const [variant, sql] of Object.entries(variants)) {
      await prisma.$executeRawUnsafe(sql, stopped.id);
      const read = await prisma.environmentLease.findUniqueOrThrow({ where: { id: stopped.id } });
      expect({ variant, status: read.status }).toEqual({ variant, status: "released" });
      expect({ variant, intent: await retryIntent(read, randomUUID()) }).toEqual({ variant, intent: null });
      expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: stopped.id } })).toEqual(read);
    }
  });

  it("R-EX-5: two export retries that read the same stopped lease: the first pins it with its request; the second's compare-and-set on the old receipt writes nothing and gets no intent", async () => {
    const prisma = db.prisma();
    const stopped = await stoppedLease();
    const first = randomUUID();
    expect((await retryIntent(stopped, first, "export-retry:first"))?.requestId).toBe(first);
    const pinned = await prisma.environmentLease.findUniqueOrThrow({ where: { id: stopped.id } });
    expect(await retryIntent(stopped, randomUUID(), "export-retry:second")).toBeNull();
    const after = await prisma.environmentLease.findUniqueOrThrow({ where: { id: stopped.id } });
    expect(after).toEqual(pinned);
    expect(after).toMatchObject({ status: "pending_cleanup", cleanupClaimedBy: "export-retry:first" });
    expect(readStopIntent(after.metadata, after)).toMatchObject({ kind: "present", value: { requestId: first } });
  });
});
