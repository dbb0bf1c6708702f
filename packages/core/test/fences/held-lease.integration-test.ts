// Fence: the held-lease rule (lease-holds.ts; FENCES.md). The stale actor is a
// later run of the same `reuse_by_environment` environment and execution workspace asking for a
// sandbox while a released, confirmed-stopped lease still holds another run's only copy of its
// files. Everything else would let the reuse through: the stop receipt is confirmed, the plugin is
// pinned and can resume, the lease is `released`. The contract: a held lease is never handed to
// another run (neither resumed nor rebound); the asking run gets a new allocation. Each case has
// its control: the same lease without the hold is reused, so the hold alone stopped it.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import type { PrismaClient } from "@copyback/db";
import { acquireLease, releaseLeaseByPolicy } from "../../src/leases/index";
import { LEASE_METADATA_KEYS } from "../../src/leases/lease-metadata";
import { createFakeProvider } from "../../src/providers/fake/index";
import { buildLeaseWorld, registryOf } from "../leases/lease-fixture";

const db = useTestDatabase({ poolSize: 8 });
type World = Awaited<ReturnType<typeof buildLeaseWorld>>;
interface Released { w: World; runId: string; leaseId: string }

/** The holds of lease-holds.ts, each written the way its writer leaves it. */
const HOLDS: Record<string, (prisma: PrismaClient, r: Released) => Promise<unknown>> = {
  "an open recovery action naming it (lease_id)": (prisma, { w, leaseId }) =>
    prisma.issueRecoveryAction.create({ data: { companyId: w.company.id, issueId: w.issue.id, leaseId, cause: "native_workspace_sync_out_retry_exhausted", fingerprint: `fence-${leaseId}`, ownerType: "board", status: "active", evidence: {} } }),
  "an escalated recovery action naming it in its evidence's leaseIds": (prisma, { w, leaseId }) =>
    prisma.issueRecoveryAction.create({ data: { companyId: w.company.id, issueId: w.issue.id, leaseId: null, cause: "native_workspace_file_recovery_required", fingerprint: `fence-ev-${leaseId}`, ownerType: "board", status: "escalated", evidence: { leaseIds: [leaseId] } } }),
  "its failed resume (reuseRefused)": (prisma, { leaseId }) =>
    prisma.$executeRaw`UPDATE environment_leases SET metadata = metadata || jsonb_build_object(${LEASE_METADATA_KEYS.reuseRefused}::text, '{"code":"provider_resume_failed","message":"lost","at":"2026-01-01T00:00:00.000Z"}'::jsonb) WHERE id = ${leaseId}::uuid`,
  "its run failed without committing": (prisma, { runId }) => prisma.heartbeatRun.update({ where: { id: runId }, data: { status: "failed" } }),
  "its run's accepted result waits for an export retry (retryable_failure)": async (prisma, { w, runId }) => {
    const result = await prisma.nativeRunResult.create({
      data: { companyId: w.company.id, runId, issueId: w.issue.id, agentId: w.agent.id, schemaStatus: "accepted", payload: {}, canonicalSha256: runId.replaceAll("-", "").padEnd(64, "0"), dedupeKey: "finish" },
    });
    await prisma.nativeRunFinalization.create({ data: { companyId: w.company.id, runId, issueId: w.issue.id, phase: "retryable_failure", resultId: result.id, attempt: 1 } });
  },
};

async function releasedLease(prisma: PrismaClient, plugin: ReturnType<typeof createFakeProvider>): Promise<Released> {
  const w = await buildLeaseWorld(prisma);
  const runId = await w.newRun();
  const acquired = await acquireLease(prisma, registryOf(plugin), w.acquireInput(runId, { policy: "reuse_by_environment" }));
  expect(await releaseLeaseByPolicy(prisma, registryOf(plugin), { leaseId: acquired.lease.id, runId, outcome: "committed" })).toMatchObject({ kind: "stopped_and_retained" });
  return { w, runId, leaseId: acquired.lease.id };
}

describe("fence: the held-lease rule", () => {
  it.each(Object.keys(HOLDS))("R-ORP-3, R-EX-4: a released, confirmed-stopped lease held by %s is never handed to another run; without the hold it is reused", async (hold) => {
    const prisma = db.prisma();
    const plugin = createFakeProvider();
    const held = await releasedLease(prisma, plugin);
    await HOLDS[hold]!(prisma, held);
    plugin.calls.length = 0;
    const next = await acquireLease(prisma, registryOf(plugin), held.w.acquireInput(await held.w.newRun(), { policy: "reuse_by_environment" }));
    expect(next.reused).toBe(false);
    expect(next.lease.id).not.toBe(held.leaseId);
    expect(plugin.calls.filter((c) => c.leaseId === held.leaseId)).toEqual([]);
    expect(await prisma.environmentLease.findUniqueOrThrow({ where: { id: held.leaseId } })).toMatchObject({ status: "released", runId: held.runId });

    // The control: the same kind of lease without the hold is reused.
    const free = await releasedLease(prisma, plugin);
    const reuse = await acquireLease(prisma, registryOf(plugin), free.w.acquireInput(await free.w.newRun(), { policy: "reuse_by_environment" }));
    expect(reuse).toMatchObject({ reused: true, lease: { id: free.leaseId } });
  });
});
