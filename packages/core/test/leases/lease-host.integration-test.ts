// Issue 23 part 1: every lease of a provider whose sandboxes are host-local (it declares
// `hostLocal`; the local provider does) records its host, the host of the workspace the claim bound
// (claim-runs.ts); a remote sandbox's lease (fake, Daytona) records none, and any host may serve
// it. No requirement id exists for this rule in REQUIREMENTS.md: named by the rule.
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@copyback/db/testing";
import { acquireLease } from "../../src/leases/acquire-lease";
import { createDefaultRegistry } from "../../src/providers/default-registry";
import { createFakeProvider } from "../../src/providers/fake/fake-provider";
import { buildLeaseWorld, registryOf } from "./lease-fixture";

const db = useTestDatabase();

describe("lease host (issue 23: host-local leases are bound to their host)", () => {
  it("host affinity: a host-local provider's lease records the workspace's host; a remote provider's records none", async () => {
    const w = await buildLeaseWorld(db.prisma(), { pluginId: "test.hostlocal" });
    await db.prisma().executionWorkspace.update({ where: { id: w.workspace.id }, data: { hostId: "host-a" } });
    const hostLocal = { ...createFakeProvider({ pluginId: "test.hostlocal" }), hostLocal: true };
    const { lease } = await acquireLease(db.prisma(), registryOf(hostLocal), w.acquireInput(await w.newRun()));
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: lease.id } })).hostId).toBe("host-a");

    const remote = await buildLeaseWorld(db.prisma());
    await db.prisma().executionWorkspace.update({ where: { id: remote.workspace.id }, data: { hostId: "host-a" } });
    const acquired = await acquireLease(db.prisma(), registryOf(createFakeProvider()), remote.acquireInput(await remote.newRun()));
    expect((await db.prisma().environmentLease.findUniqueOrThrow({ where: { id: acquired.lease.id } })).hostId).toBeNull();
  });

  it("host affinity: the local provider declares its sandboxes host-local; the fake provider does not", async () => {
    const registry = createDefaultRegistry({ instanceRoot: await mkdtemp(path.join(os.tmpdir(), "lease-host-")) });
    expect(registry.get("builtin.local")?.hostLocal).toBe(true);
    expect(createFakeProvider().hostLocal).toBeUndefined();
  });
});
