// Fence: request ids on intents and retry receipts (FENCES.md row 9, R-EX-5, R-SO-2). The stale
// actor is a stop request of an older attempt whose reply comes late: its claim expired, another
// worker's sweep finished that stop, and an export-only retry then recorded its own stop-only
// intent (a new request id) to resume the sandbox. The late reply is a confirmed receipt for the
// old request, and the lease is `pending_cleanup` again, as the late writer expects; only its own
// conditional write on the intent it sent (the request id it names) keeps it from marking the
// resumed sandbox stopped and releasable.
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
});
