// transitionLease against a real PostgreSQL: compare-and-set under concurrency, metadata patches
// merged in the same statement, and transitions the status machine forbids refused unwritten.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { transitionLease } from "../../src/leases/index";
import { buildLeaseWorld } from "./lease-fixture";

const db = useTestDatabase({ poolSize: 10 });
let world: Awaited<ReturnType<typeof buildLeaseWorld>>;

beforeAll(async () => {
  world = await buildLeaseWorld(db.prisma());
});

async function leaseRow(status: "active" | "released" | "pending_cleanup", metadata: object = {}) {
  return db.prisma().environmentLease.create({
    data: {
      companyId: world.company.id,
      environmentId: world.environment.id,
      executionWorkspaceId: world.workspace.id,
      runId: await world.newRun(),
      provider: "fake",
      pluginId: "builtin.fake",
      providerLeaseId: "fake-x",
      leasePolicy: "reuse_by_environment",
      status,
      metadata,
    },
  });
}

describe("transitionLease", () => {
  it("exactly one of many concurrent compare-and-sets wins", async () => {
    const lease = await leaseRow("released");
    const runs = await Promise.all(Array.from({ length: 8 }, () => world.newRun()));
    const results = await Promise.all(
      runs.map((runId) => transitionLease(db.prisma(), { leaseId: lease.id, from: ["released"], to: "active", set: { runId } })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = runs[results.indexOf(true)];
    expect(await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "active", runId: winner });
  });

  it("loses when the lease is not in an expected status, and writes nothing", async () => {
    const lease = await leaseRow("active", { keep: 1 });
    expect(await transitionLease(db.prisma(), { leaseId: lease.id, from: ["pending_cleanup"], to: "released", metadataPatch: { failure: { code: "x" } } })).toBe(false);
    expect(await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).toMatchObject({ status: "active", metadata: { keep: 1 } });
  });

  it("merges the metadata patch (null removes a key) and stamps released_at on release", async () => {
    const lease = await leaseRow("pending_cleanup", { keep: 1, sandboxStopAndRetain: { any: true } });
    expect(await transitionLease(db.prisma(), { leaseId: lease.id, from: ["pending_cleanup"], to: "released", metadataPatch: { sandboxStopAndRetain: null, isolated: true } })).toBe(true);
    const after = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.metadata).toEqual({ keep: 1, isolated: true });
    expect(after.releasedAt).not.toBeNull();
  });

  it("keeps non-object metadata as evidence under `malformed` instead of merging into it", async () => {
    const lease = await leaseRow("active");
    await db.prisma().$executeRaw`UPDATE environment_leases SET metadata = '"garbage"'::jsonb WHERE id = ${lease.id}::uuid`;
    expect(await transitionLease(db.prisma(), { leaseId: lease.id, from: ["active"], to: "failed", metadataPatch: { failure: { code: "x", message: "", at: new Date().toISOString() } } })).toBe(true);
    const after = await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } });
    expect(after.metadata).toMatchObject({ malformed: "garbage", failure: { code: "x" } });
  });

  it("the metadata compare makes a decision taken on a stale read lose", async () => {
    const lease = await leaseRow("pending_cleanup", { sandboxStopAndRetain: { requestId: "a" } });
    expect(await transitionLease(db.prisma(), { leaseId: lease.id, from: ["pending_cleanup"], to: "released", expectMetadata: { key: "sandboxStopAndRetain", value: { requestId: "b" } } })).toBe(false);
    expect(await transitionLease(db.prisma(), { leaseId: lease.id, from: ["pending_cleanup"], to: "released", expectMetadata: { key: "sandboxStopAndRetain", value: { requestId: "a" } } })).toBe(true);
  });

  it("refuses a transition the status machine does not allow, without writing", async () => {
    const lease = await leaseRow("released");
    await expect(transitionLease(db.prisma(), { leaseId: lease.id, from: ["released"], to: "pending_cleanup" })).rejects.toMatchObject({ kind: "invalid", code: "lease_transition_not_allowed" });
    await expect(transitionLease(db.prisma(), { leaseId: lease.id, from: [], to: "active" })).rejects.toMatchObject({ code: "lease_transition_not_allowed" });
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).status).toBe("released");
  });
});
